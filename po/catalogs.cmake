# Compiles po/<lang>.po (every language in po/LINGUAS) into ${CMAKE_BINARY_DIR}/locale/<lang>/LC_MESSAGES/
# transformer-studio.mo with GNU msgfmt (Debian package gettext). Target ts_locale; without msgfmt the app runs in
# English only (a warning says so).
find_program(TS_MSGFMT msgfmt)
if(NOT TS_MSGFMT)
  message(WARNING "msgfmt not found (install gettext: bash .ci/deps.sh): the interface stays English only")
  return()
endif()
include(GNUInstallDirs)
file(STRINGS ${CMAKE_SOURCE_DIR}/po/LINGUAS TS_LINGUAS REGEX "^[^#]")
set(TS_MO_FILES)
foreach(lang ${TS_LINGUAS})
  string(STRIP "${lang}" lang)
  set(mo ${CMAKE_BINARY_DIR}/locale/${lang}/LC_MESSAGES/transformer-studio.mo)
  add_custom_command(
    OUTPUT ${mo}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/locale/${lang}/LC_MESSAGES
    COMMAND ${TS_MSGFMT} --check --output-file=${mo} ${CMAKE_SOURCE_DIR}/po/${lang}.po
    DEPENDS ${CMAKE_SOURCE_DIR}/po/${lang}.po
    COMMENT "Compiling the ${lang} interface catalog")
  list(APPEND TS_MO_FILES ${mo})
  install(FILES ${mo} DESTINATION ${CMAKE_INSTALL_DATADIR}/locale/${lang}/LC_MESSAGES)
endforeach()
add_custom_target(ts_locale ALL DEPENDS ${TS_MO_FILES})

# Python tests of the corpus builders (assets/corpus): cleaning rules on hand-made catalog entries and a whole
# offline run (a fake apt-get hands out a .deb the test builds). Included from tests/CMakeLists.txt; no network.
find_program(TS_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(TS_PYTHON3 python3)
find_program(TS_DPKG_DEB dpkg-deb)
if(TS_PYTHON3 AND TS_DPKG_DEB)
  add_test(NAME corpus_build_parallel
           COMMAND ${TS_PYTHON3} -m unittest discover -v -s ${CMAKE_CURRENT_SOURCE_DIR}/corpus -p "*_test.py")
  set_tests_properties(corpus_build_parallel PROPERTIES TIMEOUT 120)
else()
  message(STATUS "corpus tests skipped: python3 or dpkg-deb not found")
endif()

# Headless `render` tests (included from tests/CMakeLists.txt when the transformer-studio target exists). No X
# server: PNG goes through EGL (Mesa surfaceless), SVG and CSV are pure CPU. DISPLAY is cleared to prove it.
pkg_check_modules(TS_RENDER_STB REQUIRED IMPORTED_TARGET stb)
add_executable(ts_png_expect ${CMAKE_CURRENT_SOURCE_DIR}/app/render/png_expect.cpp)
target_link_libraries(ts_png_expect PRIVATE PkgConfig::TS_RENDER_STB)
find_program(TS_XMLLINT xmllint)

set(TS_R ${CMAKE_BINARY_DIR}/render_tests)
set(TS_RUN_CLI ${CMAKE_CURRENT_SOURCE_DIR}/app/render/run_cli.cmake)
set(TS_APP $<TARGET_FILE:transformer-studio>)
set(TS_EXPECT $<TARGET_FILE:ts_png_expect>)

# Attention of one head, light theme: white background at the corner, viridis yellow (weight 1.0 of the first
# query on the first key, causal mask) somewhere, many colors.
add_test(NAME render_png_attention
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;attention;--text;The cat sat on the mat.;--layer;1;--head;2;--width;1200;--height;800;--out;${TS_R}/attention.png"
                 "-DTHEN=${TS_EXPECT};${TS_R}/attention.png;--size;1200x800;--pixel;2,2,255,255,255,255,1;--contains;253,231,37,12;--min-colors;64"
                 -P ${TS_RUN_CLI})
# 4K at scale 2, dark, transparent: alpha 0 at the corner, the diverging map's dark red and blue present.
add_test(NAME render_png_4k_dark_transparent
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;positions-table;--width;3840;--height;2160;--scale;2;--theme;dark;--transparent;--out;${TS_R}/pe_4k.png"
                 "-DTHEN=${TS_EXPECT};${TS_R}/pe_4k.png;--size;3840x2160;--pixel;3,3,26,28,33,0,1;--contains;103,0,31,12;--contains;5,48,97,12"
                 -P ${TS_RUN_CLI})
# Interface language (issue #16): --lang zh gives Chinese titles and labels; the PNG is drawn (non-blank, the
# viridis yellow of the heatmap present) and the SVG holds the Chinese title with a CJK font in its font-family;
# without --lang the export stays English.
add_test(NAME render_png_zh_attention
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;attention;--lang;zh;--text;The cat sat on the mat.;--layer;1;--head;2;--width;1200;--height;800;--out;${TS_R}/attention_zh.png"
                 "-DTHEN=${TS_EXPECT};${TS_R}/attention_zh.png;--size;1200x800;--pixel;2,2,255,255,255,255,1;--contains;253,231,37,12;--min-colors;64"
                 -P ${TS_RUN_CLI})
add_test(NAME render_svg_zh_attention
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;attention;--lang;zh;--text;The cat sat on the mat.;--out;${TS_R}/attention_zh.svg"
                 "-DTHEN=bash;-c;grep -q '注意力权重，第 0 层，第 0 头' ${TS_R}/attention_zh.svg && grep -q '键词元' ${TS_R}/attention_zh.svg && grep -q 'font-family=\"[^\"]*WenQuanYi Micro Hei' ${TS_R}/attention_zh.svg"
                 -P ${TS_RUN_CLI})
add_test(NAME render_svg_en_by_default
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;attention;--text;The cat sat on the mat.;--out;${TS_R}/attention_en.svg"
                 "-DTHEN=bash;-c;grep -q 'Attention weights, layer 0, head 0' ${TS_R}/attention_en.svg && ! grep -q '注意力' ${TS_R}/attention_en.svg"
                 -P ${TS_RUN_CLI})
add_test(NAME render_error_bad_lang
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP} "-DARGS=--view;attention;--lang;fr;--out;${TS_R}/x.svg"
                 "-DEXPECT_FAIL=--lang expects en or zh" -P ${TS_RUN_CLI})
# Every view as PNG, SVG (xmllint) and CSV, split over eight tests (every eighth view each): one test for all of them
# ran past its limit under ASan once the views passed 45.
foreach(shard RANGE 7)
  add_test(NAME render_every_view_${shard}
           COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP} -DOUT=${TS_R}/all -DCHECK=$<TARGET_FILE:ts_png_expect>
                   -DXMLLINT=${TS_XMLLINT} -DSHARD=${shard} -DSHARDS=8 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/render/render_all.cmake)
endforeach()
# A session file reproduces the exact figure.
add_test(NAME render_session_save
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP}
                 "-DARGS=--view;softmax;--logits;3,1,0.2,-2;--temperature;0.5;--mask;padding;--padding;1;--out;${TS_R}/sm_a.svg;--save-session;${TS_R}/sm.json"
                 -P ${TS_RUN_CLI})
add_test(NAME render_session_load
         COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP} "-DARGS=--session;${TS_R}/sm.json;--out;${TS_R}/sm_b.svg"
                 "-DTHEN=${CMAKE_COMMAND};-E;compare_files;${TS_R}/sm_a.svg;${TS_R}/sm_b.svg" -P ${TS_RUN_CLI})
set_tests_properties(render_session_save PROPERTIES FIXTURES_SETUP render_session)
set_tests_properties(render_session_load PROPERTIES FIXTURES_REQUIRED render_session)
# Errors: one line, non-zero exit.
foreach(case
    "unknown_view|--view,atention,--out,${TS_R}/x.png|unknown view 'atention'"
    "bad_option|--view,activations,--head,2,--out,${TS_R}/x.svg|--head does not apply to view activations"
    "bad_format|--view,activations,--out,${TS_R}/x.jpg|expected a .png, .svg or .csv"
    "unwritable|--view,activations,--out,/proc/ts_render_test/x.svg|cannot write /proc/ts_render_test/x.svg"
    "bad_model|--model,/nonexistent/model,--view,attention,--out,${TS_R}/x.svg|/nonexistent/model"
    "bad_session|--session,/nonexistent/session.json,--out,${TS_R}/x.svg|cannot read session file")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 args)
  list(GET parts 2 regex)
  string(REPLACE "," ";" args "${args}")
  add_test(NAME render_error_${name}
           COMMAND ${CMAKE_COMMAND} -DAPP=${TS_APP} "-DARGS=${args}" "-DEXPECT_FAIL=${regex}" -P ${TS_RUN_CLI})
endforeach()
get_property(ts_render_tests DIRECTORY PROPERTY TESTS)
list(FILTER ts_render_tests INCLUDE REGEX "^render_")
set_tests_properties(${ts_render_tests} PROPERTIES ENVIRONMENT "DISPLAY=;WAYLAND_DISPLAY=" TIMEOUT 300)

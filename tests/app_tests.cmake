# App window tests (included from tests/CMakeLists.txt when the transformer-studio target exists): run the real
# window under Xvfb in screenshot mode, save one PNG per panel, check each is non-blank and the log has no errors.
pkg_check_modules(TS_TEST_STB REQUIRED IMPORTED_TARGET stb)
add_executable(ts_png_check ${CMAKE_CURRENT_SOURCE_DIR}/app/window/png_check.cpp)
target_link_libraries(ts_png_check PRIVATE PkgConfig::TS_TEST_STB)

find_program(TS_XVFB_RUN xvfb-run)
if(NOT TS_XVFB_RUN)
  message(STATUS "xvfb-run not found: window tests are not registered")
  return()
endif()

set(TS_APP_PANELS tokens attention softmax activations normalization positions predictions residual model training causal)
add_test(NAME app_window_all_panels
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/all -DPANEL=all "-DPANELS=${TS_APP_PANELS}"
                 "-DARGS=--text;The cat sat on the mat because it was tired."
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
# Chinese text (CJK font merged into the atlas) on the Tokens and Attention panels.
add_test(NAME app_window_cjk_text
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/cjk -DPANEL=all "-DPANELS=tokens;attention"
                 "-DARGS=--text;注意力机制让模型关注相关的词。Attention is all you need."
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
set_tests_properties(app_window_cjk_text PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
# The Chinese interface (issue #16) on every panel at the default 1600×1000 and at 1280×800.
add_test(NAME app_window_zh_all_panels
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/zh -DPANEL=all "-DPANELS=${TS_APP_PANELS}"
                 "-DARGS=--lang;zh;--text;The cat sat on the mat because it was tired."
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
add_test(NAME app_window_zh_all_panels_1280x800
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/zh_1280 -DPANEL=all "-DPANELS=${TS_APP_PANELS}"
                 "-DARGS=--lang;zh;--size;1280x800;--text;注意力机制让模型关注相关的词。"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
set_tests_properties(app_window_zh_all_panels app_window_zh_all_panels_1280x800 PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
# Bad input: a missing model folder (falls back with a message) and empty text, light theme.
add_test(NAME app_window_bad_model_empty_text
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/bad -DPANEL=attention -DPANELS=attention
                 "-DARGS=--model;/nonexistent/model-folder;--text=;--theme;light" "-DEXPECT_LOG=could not load"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
set_tests_properties(app_window_all_panels app_window_bad_model_empty_text PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
# The Lessons tab on a step that loads its own model (austen-llama, the GQA model) and shows the Attention panel
# under the lesson card.
add_test(NAME app_window_lesson_step
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/lessons -DPANEL=lessons -DPANELS=lessons
                 "-DARGS=--lesson;mha-mqa-gqa:3" "-DEXPECT_LOG=austen-llama"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
set_tests_properties(app_window_lesson_step PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
# Input under slow frames (a quick click, fast typing with Backspace) and the idle window, with xdotool.
find_program(TS_XDOTOOL xdotool)
if(TS_XDOTOOL)
  add_test(NAME app_window_input_slow_frames_and_idle
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/input_test.sh $<TARGET_FILE:transformer-studio>
                   ${CMAKE_BINARY_DIR}/screenshots/input)
  set_tests_properties(app_window_input_slow_frames_and_idle PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  # The training lab (#33): a 20-step run started with --lab, its Training tab saved, its snapshot opened.
  add_test(NAME app_window_training_lab
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/lab_window_test.sh $<TARGET_FILE:transformer-studio>
                   ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/lab_tiny.json ${CMAKE_BINARY_DIR}/screenshots/lab)
  set_tests_properties(app_window_training_lab PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  add_test(NAME app_window_lesson_return
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/lesson_return_test.sh $<TARGET_FILE:transformer-studio>
                   ${CMAKE_BINARY_DIR}/screenshots/lesson_return)
  set_tests_properties(app_window_lesson_return PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  # The logit lens only for the Predictions panel; a click on its tab brings it (issue #14).
  add_test(NAME app_window_lens_on_demand
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/lens_on_demand_test.sh $<TARGET_FILE:transformer-studio>
                   ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt ${CMAKE_BINARY_DIR}/screenshots/lens_on_demand)
  set_tests_properties(app_window_lens_on_demand PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  # English / 中文 in the sidebar switches the interface at run time; the choice survives a restart (issue #16).
  add_test(NAME app_window_language_switch
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/language_switch_test.sh $<TARGET_FILE:transformer-studio>
                   ${CMAKE_BINARY_DIR}/screenshots/language)
  set_tests_properties(app_window_language_switch PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
else()
  message(WARNING "xdotool not found: the window input test is not registered (bash .ci/deps.sh installs it)")
endif()
# The Causal panel with its analyses run (ablation sweep, logit attribution, attention flow, input attribution) on the
# bundled model.
add_test(NAME app_window_causal_analyses
         COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                 -DOUT=${CMAKE_BINARY_DIR}/screenshots/causal -DPANEL=causal -DPANELS=causal
                 "-DARGS=--text;When Mary and John went to the store, John gave a drink to;--analyses;sweep,attribution,flow,inputs"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
set_tests_properties(app_window_causal_analyses PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
# The bundled translation model: translate a held-out sentence of the test split (beam 4) and show its cross-attention heads.
if(EXISTS ${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer/model.safetensors)
  add_test(NAME app_window_translation_cross_attention
           COMMAND ${CMAKE_COMMAND} -DAPP=$<TARGET_FILE:transformer-studio> -DCHECK=$<TARGET_FILE:ts_png_check>
                   -DOUT=${CMAKE_BINARY_DIR}/screenshots/translation -DPANEL=attention -DPANELS=attention
                   "-DARGS=--model;${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer;--text;Do you really want to delete the chart color?;--translate;--beam;4;--attn-source;cross"
                   "-DEXPECT_LOG=translated (beam): "
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/app/window/run_window_test.cmake)
  set_tests_properties(app_window_translation_cross_attention PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE)
endif()
# Translation in the window on a tiny model the test trains: --translate fills the target, cross-attention shows.
add_test(NAME app_window_translation_tiny_model
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/translation_window_test.sh $<TARGET_FILE:transformer-studio>
                 $<TARGET_FILE:ts_png_check> ${CMAKE_BINARY_DIR}/screenshots/translation_tiny)
set_tests_properties(app_window_translation_tiny_model PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
# A synthetic BERT folder (tests/golden/hf_bert) typed "The capital of France is [MASK].": the fill-mask view.
add_test(NAME app_window_bert_fill_mask
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/app/window/fill_mask_window_test.sh $<TARGET_FILE:transformer-studio>
                 $<TARGET_FILE:ts_png_check> ${CMAKE_BINARY_DIR}/screenshots/fill_mask)
set_tests_properties(app_window_bert_fill_mask PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)

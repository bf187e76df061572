# CLI tests (included from tests/CMakeLists.txt when the transformer-studio target exists): each subcommand's
# success path on a small committed model, and bad input -> non-zero exit with one line saying why.
set(TS_CLI $<TARGET_FILE:transformer-studio>)
set(TS_CLI_OUT ${CMAKE_BINARY_DIR}/cli_out)
file(MAKE_DIRECTORY ${TS_CLI_OUT})
function(ts_cli_test name expect)
  cmake_parse_arguments(T "" "STDERR_REGEX;STDOUT_REGEX;OUTPUT" "CMD" ${ARGN})
  set(defs -DEXPECT=${expect})
  if(T_STDERR_REGEX)
    list(APPEND defs "-DSTDERR_REGEX=${T_STDERR_REGEX}")
  endif()
  if(T_STDOUT_REGEX)
    list(APPEND defs "-DSTDOUT_REGEX=${T_STDOUT_REGEX}")
  endif()
  if(T_OUTPUT)
    list(APPEND defs -DOUTPUT=${T_OUTPUT})
  endif()
  string(REPLACE ";" "|" cmd "${T_CMD}")
  add_test(NAME cli_${name} COMMAND ${CMAKE_COMMAND} "-DCMD=${cmd}" ${defs}
           -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_test.cmake)
endfunction()

ts_cli_test(trace_hf_gpt2 ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2,3,4
            --out ${TS_CLI_OUT}/trace_gpt2.safetensors OUTPUT ${TS_CLI_OUT}/trace_gpt2.safetensors)
set_tests_properties(cli_trace_hf_gpt2 PROPERTIES FIXTURES_SETUP cli_trace_gpt2)
# Interventions: zero-ablating two heads moves the last position's logits; patching the clean run's last-layer
# output at the last position into another input reproduces the clean run's last logits exactly.
ts_cli_test(trace_ablate ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2,3,4
            --ablate 0.1,1.0 --out ${TS_CLI_OUT}/trace_ablate.safetensors OUTPUT ${TS_CLI_OUT}/trace_ablate.safetensors
            STDERR_REGEX "edits moved the last position's logits by max \\|dlogit\\| = (0\\.0*[1-9]|[1-9])")
ts_cli_test(trace_patch ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 5,6,7,8
            --patch-from ${TS_CLI_OUT}/trace_gpt2.safetensors --patch dec.1.resid_ffn@3
            --out ${TS_CLI_OUT}/trace_patch.safetensors OUTPUT ${TS_CLI_OUT}/trace_patch.safetensors
            STDERR_REGEX "vs --patch-from logits at their last position: max \\|dlogit\\| = 0[^0-9.]")
set_tests_properties(cli_trace_patch PROPERTIES FIXTURES_REQUIRED cli_trace_gpt2)
ts_cli_test(trace_ablate_bad_head fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1,2 --ablate 0.9 --out ${TS_CLI_OUT}/x STDERR_REGEX "dec\\.0\\.attn\\.head_out.*head 9 out of range")
# --threads: two threads give a trace (values checked against one thread in tests/core/perf_paths_test.cpp); nonsense
# is one line.
ts_cli_test(trace_two_threads ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_qwen2 --ids 1,2,3,4
            --threads 2 --out ${TS_CLI_OUT}/trace_threads.safetensors OUTPUT ${TS_CLI_OUT}/trace_threads.safetensors)
ts_cli_test(trace_bad_threads fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2
            --threads 0 --out ${TS_CLI_OUT}/x STDERR_REGEX "--threads expects an integer from 1 to 256, got '0'")
ts_cli_test(render_bad_threads fail CMD ${TS_CLI} render --view softmax --logits 1,2 --threads many
            --out ${TS_CLI_OUT}/x.csv STDERR_REGEX "--threads expects an integer")
ts_cli_test(trace_missing_model fail CMD ${TS_CLI} trace --model /nonexistent/model --ids 1 --out ${TS_CLI_OUT}/x
            STDERR_REGEX "'/nonexistent/model' does not exist")
ts_cli_test(trace_unknown_option fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --bogus 1
            STDERR_REGEX "unknown option --bogus")
ts_cli_test(trace_bad_ids fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,x
            --out ${TS_CLI_OUT}/x STDERR_REGEX "comma-separated integers")
ts_cli_test(trace_id_out_of_range fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1,999999 --out ${TS_CLI_OUT}/x STDERR_REGEX "999999")
ts_cli_test(trace_unwritable_out fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2
            --out /proc/ts-no-such-dir/trace.safetensors STDERR_REGEX "cannot write /proc/ts-no-such-dir")
ts_cli_test(trace_text_without_tokenizer fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text hello --out ${TS_CLI_OUT}/x STDERR_REGEX "no tokenizer")
# Long texts (#30): a request over --memory-budget is refused before it runs, in one line; selections are checked.
ts_cli_test(trace_over_budget fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2,3
            --memory-budget 2K --out ${TS_CLI_OUT}/x
            STDERR_REGEX "trace of 3 tokens needs about [0-9.]+ [KM]iB, more than the memory budget of 2.00 KiB: use a shorter text")
# A subset is recorded as a subset (globs included): its need, not the whole trace's, is held against the budget.
ts_cli_test(trace_glob_subset_within_budget ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30
            --only "*.attn.q" --memory-budget 250K --out ${TS_CLI_OUT}/subset.safetensors
            STDERR_REGEX "wrote 3 tensors for 30 tokens")
ts_cli_test(trace_whole_over_that_budget fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30
            --memory-budget 250K --out ${TS_CLI_OUT}/whole.safetensors
            STDERR_REGEX "trace of 30 tokens needs about [0-9.]+ KiB, more than the memory budget of 250.00 KiB")
ts_cli_test(trace_bad_budget fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2
            --memory-budget lots --out ${TS_CLI_OUT}/x STDERR_REGEX "memory budget 'lots' is not a size")
ts_cli_test(trace_bad_layers fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2
            --layers 3-1 --out ${TS_CLI_OUT}/x STDERR_REGEX "--layers expects 0 <= A <= B, got '3-1'")
ts_cli_test(trace_bad_head fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --ids 1,2
            --head dec.0.attn.head_out:1 --out ${TS_CLI_OUT}/x STDERR_REGEX "--head expects NAME:HEAD")
ts_cli_test(trace_head_out_of_range fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1,2 --head dec.0.attn.probs:99 --out ${TS_CLI_OUT}/x STDERR_REGEX "the block has [0-9]+ heads")
ts_cli_test(corpus_help ok CMD ${TS_CLI} corpus build --help)
ts_cli_test(corpus_parallel_unknown_pair fail CMD ${TS_CLI} corpus build --parallel fr-en --out ${TS_CLI_OUT}/pairs
            STDERR_REGEX "--parallel expects zh-en")
ts_cli_test(corpus_parallel_missing_out fail CMD ${TS_CLI} corpus build --parallel zh-en
            STDERR_REGEX "missing required option --out")
# No apt-get on PATH (the pair builder runs /usr/bin/python3 by its full path): one line, non-zero exit.
ts_cli_test(corpus_parallel_without_apt fail CMD ${CMAKE_COMMAND} -E env PATH=/nonexistent ${TS_CLI} corpus build
            --parallel zh-en --out ${TS_CLI_OUT}/pairs STDERR_REGEX "apt-get not found")
# Weights holding NaN/+Inf (tests/golden/nonfinite_model, made by tests/reference/make_nonfinite_fixture.py): the
# model opens, the trace is written, and one warning line names the tensor.
ts_cli_test(trace_nonfinite_weights ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/nonfinite_model
            --ids 1,2,3 --out ${TS_CLI_OUT}/trace_nonfinite.safetensors OUTPUT ${TS_CLI_OUT}/trace_nonfinite.safetensors
            STDERR_REGEX "transformer-studio trace: warning: [^']*tensor 'dec\\.0\\.attn\\.wq' \\(8, 8\\) holds 2 non-finite values \\(1 NaN, 1 \\+Inf\\)")
ts_cli_test(unknown_subcommand fail CMD ${TS_CLI} frobnicate STDERR_REGEX "unknown subcommand")
if(EXISTS ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt/tokenizer.json)
  ts_cli_test(trace_default_model_text ok CMD ${TS_CLI} trace --model ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt
              --text "The cat sat on the mat because it was tired." --out ${TS_CLI_OUT}/trace_default.safetensors
              OUTPUT ${TS_CLI_OUT}/trace_default.safetensors)
  ts_cli_test(tokenizer_encode_invalid_utf8 ok CMD ${TS_CLI} tokenizer encode
              --tokenizer ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt --text "caf\\xc3 ok")
endif()

# Tokenizers other than byte-level BPE: the committed WordPiece (BERT) and Unigram (T5-style) tokenizer.json files;
# a broken one is refused naming the file and the field.
ts_cli_test(tokenizer_encode_wordpiece ok CMD ${TS_CLI} tokenizer encode
            --tokenizer ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer/data/wordpiece_tokenizer.json --text "The capital of France."
            STDOUT_REGEX "WordPiece \\(wordpiece_tokenizer.json")
ts_cli_test(tokenizer_encode_unigram_json ok CMD ${TS_CLI} tokenizer encode
            --tokenizer ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer/data/unigram_tokenizer.json --text "Hello world" --json
            STDOUT_REGEX "\"tokenizer\":\"Unigram.*</s>")
ts_cli_test(tokenizer_encode_broken_json fail CMD ${TS_CLI} tokenizer encode
            --tokenizer ${CMAKE_CURRENT_SOURCE_DIR}/tokenizer/data/parity_texts.json --text "x"
            STDERR_REGEX "parity_texts.json: top level: expected a JSON object")

# --help and -h: every subcommand (and the bare executable) prints its usage on stdout and exits 0.
foreach(sub "" trace render eval tokenizer "tokenizer train" "tokenizer encode" corpus "corpus build" train translate)
  string(REPLACE " " ";" sub_args "${sub}")
  string(REPLACE " " "_" sub_name "${sub}")
  if(sub_name STREQUAL "")
    set(sub_name app)
  endif()
  ts_cli_test(help_${sub_name} ok CMD ${TS_CLI} ${sub_args} --help STDOUT_REGEX "^usage: transformer-studio")
  ts_cli_test(help_short_${sub_name} ok CMD ${TS_CLI} ${sub_args} -h STDOUT_REGEX "usage: transformer-studio")
endforeach()
# Usage errors stay one line on stderr with a non-zero exit.
ts_cli_test(tokenizer_no_action fail CMD ${TS_CLI} tokenizer STDERR_REGEX "expected an action")
ts_cli_test(render_unknown_option fail CMD ${TS_CLI} render --bogus STDERR_REGEX "unknown option --bogus")
ts_cli_test(app_unknown_subcommand fail CMD ${TS_CLI} translat STDERR_REGEX "unknown subcommand")

# README's run command, verbatim: its build part, then the path it launches opens the window (Xvfb, a few frames).
find_program(TS_XVFB_RUN_CLI xvfb-run)
if(TS_XVFB_RUN_CLI)
  add_test(NAME readme_run_command
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/readme_run_command.sh ${CMAKE_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR}/readme_run)
  set_tests_properties(readme_run_command PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
endif()
# Encoder-decoder training on sentence pairs: a 50-step smoke run through the CLI, and its one-line errors.
add_test(NAME cli_train_pairs_smoke
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/train_pairs_test.sh ${TS_CLI} ${TS_CLI_OUT}/train_pairs)
set_tests_properties(cli_train_pairs_smoke PROPERTIES TIMEOUT 300)
ts_cli_test(train_pairs_decoder_config fail CMD ${TS_CLI} train --config ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/no_such.json
            --pairs ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/pairs_tiny.tsv --out ${TS_CLI_OUT}/x STDERR_REGEX "no_such.json")
ts_cli_test(train_pairs_with_data fail CMD ${TS_CLI} train --config ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/encdec_tiny.json
            --pairs ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/pairs_tiny.tsv --data x.txt --out ${TS_CLI_OUT}/x
            STDERR_REGEX "does not combine with --data")
ts_cli_test(train_encdec_without_pairs fail CMD ${TS_CLI} train
            --config ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/encdec_tiny.json --tokens x.bin --out ${TS_CLI_OUT}/x
            STDERR_REGEX "needs --pairs")
if(EXISTS ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt/tokenizer.json)
  # The bundled English tokenizer has no <pad> token.
  ts_cli_test(train_pairs_tokenizer_without_pad fail CMD ${TS_CLI} train
              --config ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/encdec_tiny.json
              --tokenizer ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt/tokenizer.json
              --pairs ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/pairs_tiny.tsv --direction en-zh --out ${TS_CLI_OUT}/x
              STDERR_REGEX "no special token <pad>")
endif()
ts_cli_test(train_pairs_bad_direction fail CMD ${TS_CLI} train
            --config ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/encdec_tiny.json
            --tokenizer ${CMAKE_SOURCE_DIR}/tests/golden/hf_gpt2 --pairs ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/pairs_tiny.tsv
            --direction fr-en --out ${TS_CLI_OUT}/x STDERR_REGEX "unknown direction 'fr-en'")

# Translation (core/forward/decode.h through `translate` and `trace`): a tiny model trained by the test memorizes
# tests/cli/data/pairs_tiny.tsv and must translate its pairs back both ways; see tests/cli/translate_test.sh.
add_test(NAME cli_translate
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/translate_test.sh ${TS_CLI} ${TS_CLI_OUT}/translate)
set_tests_properties(cli_translate PROPERTIES TIMEOUT 300)
ts_cli_test(translate_decoder_only_model fail CMD ${TS_CLI} translate --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text hi STDERR_REGEX "is decoder-only, not an encoder-decoder translation model")
ts_cli_test(translate_missing_model fail CMD ${TS_CLI} translate --text hi STDERR_REGEX "missing required option --model")
ts_cli_test(translate_bad_beam fail CMD ${TS_CLI} translate --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2 --beam 0
            STDERR_REGEX "--beam: expected a whole number from 1 to 16, got '0'")
ts_cli_test(translate_bad_length_penalty fail CMD ${TS_CLI} translate --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --length-penalty x STDERR_REGEX "--length-penalty expects a number")
ts_cli_test(trace_source_on_decoder_only fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --source hi --target-ids 1 --out ${TS_CLI_OUT}/x STDERR_REGEX "--source is for encoder-decoder models")
ts_cli_test(trace_translate_on_decoder_only fail CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --ids 1 --translate --out ${TS_CLI_OUT}/x STDERR_REGEX "--translate needs an encoder-decoder model")
# The bundled translation model through `render`: encoder, decoder and cross-attention after --translate and with a
# typed --target (tests/cli/translate_render_test.sh).
if(EXISTS ${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer/model.safetensors)
  add_test(NAME cli_translate_render_attention_sources
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/translate_render_test.sh ${TS_CLI}
                   ${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer ${TS_CLI_OUT}/translate_render)
  set_tests_properties(cli_translate_render_attention_sources PROPERTIES TIMEOUT 300)
endif()
# Translation evaluation: a tiny encoder-decoder folder built in the test, `tokenizer encode --lines`, IBM-1 reference
# alignments, `eval --pairs` printing chrF/BLEU/retrieval/alignment hits and its JSON report, and its one-line errors.
add_test(NAME cli_eval_translation
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cli/eval_translation_test.sh ${TS_CLI} ${CMAKE_SOURCE_DIR}
                 ${TS_CLI_OUT}/eval_translation)
set_tests_properties(cli_eval_translation PROPERTIES TIMEOUT 300)
# A decoder-only model has no translation to evaluate; translation options without --pairs are refused.
ts_cli_test(eval_pairs_on_decoder_only fail CMD ${TS_CLI} eval --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --pairs ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/pairs_tiny.tsv
            STDERR_REGEX "--pairs evaluates translation models; .* is decoder-only, not encoder-decoder")
ts_cli_test(eval_beam_without_pairs fail CMD ${TS_CLI} eval --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --beam 4 STDERR_REGEX "--beam needs --pairs and an encoder-decoder model")
ts_cli_test(eval_missing_model fail CMD ${TS_CLI} eval --model /nonexistent/model --pairs x.tsv
            STDERR_REGEX "'/nonexistent/model' does not exist")
if(EXISTS ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt/tokenizer.json)
  ts_cli_test(tokenizer_encode_lines_missing_file fail CMD ${TS_CLI} tokenizer encode
              --tokenizer ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt --lines /nonexistent/lines.txt
              STDERR_REGEX "cannot open --lines file")
endif()
# Lessons: the bundled lessons all run headless; a teacher's file with a typo is refused naming step and field; a
# question the model cannot answer is reported.
file(GLOB TS_BUNDLED_LESSONS ${CMAKE_SOURCE_DIR}/assets/lessons/*.json)
ts_cli_test(lessons_check_bundled ok CMD ${TS_CLI} lessons check ${TS_BUNDLED_LESSONS}
            STDOUT_REGEX "mha-mqa-gqa .*step 2 \\[kv-cache on austen-llama\\] 1 figure\\(s\\); crossing kv_cache_bytes: kv_context = 1024 expected")
ts_cli_test(lessons_check_bad_knob fail CMD ${TS_CLI} lessons check ${CMAKE_CURRENT_SOURCE_DIR}/cli/lessons/bad_knob.json
            STDERR_REGEX "bad_knob.json: step 1: question.knob: 'sm_temprature' is not a numeric setting")
ts_cli_test(lessons_check_never_crosses fail CMD ${TS_CLI} lessons check ${CMAKE_CURRENT_SOURCE_DIR}/cli/lessons/never_crosses.json
            STDOUT_REGEX "step 1 .*ERROR: question: .*never reaches 1")
ts_cli_test(lessons_list ok CMD ${TS_CLI} lessons list STDOUT_REGEX "softmax-stability +4 steps")
# Trust (#27): values the model cannot honour are refused with the model's range, never clamped into a figure that
# names another layer; sizes are bounded with the window's limits; numbers must be whole values.
# Head detectors (#32): the view renders on random tokens; a probe length outside 2..512 is refused with the range.
ts_cli_test(render_head_detectors_random ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view head-detectors --random-tokens --random-length 6 --out ${TS_CLI_OUT}/heads.svg
            STDOUT_REGEX "view head-detectors, 4 figures")
ts_cli_test(render_head_detectors_bad_length fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view heads-induction --random-tokens --random-length 1 --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "random-length")
# Input attribution (#32): occlusion with a span and integrated gradients render on the synthetic GPT-2 folder; the
# CSV carries the scores; the translation model gives its matrix beside cross-attention; an unknown method, an
# out-of-range step count and an encoder-only model are refused.
ts_cli_test(render_input_attribution_ig ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text "abc abd" --view input-attribution --steps 20 --out ${TS_CLI_OUT}/attr.csv
            STDOUT_REGEX "view input-attribution, 1 figure")
ts_cli_test(render_input_attribution_occlusion ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text "abc abd" --view input-attribution --method occlusion --span 2 --target b --out ${TS_CLI_OUT}/occ.svg
            STDOUT_REGEX "view input-attribution, 1 figure")
ts_cli_test(render_input_attribution_bad_method fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view input-attribution --method saliency --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "--method expects grad-x-input, integrated-gradients or occlusion, got 'saliency'")
ts_cli_test(render_input_attribution_bad_baseline fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view input-attribution --baseline pad --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "--baseline expects mean or zero, got 'pad'")
ts_cli_test(render_input_attribution_bad_steps fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view input-attribution --steps 0 --out ${TS_CLI_OUT}/x.svg STDERR_REGEX "steps")
ts_cli_test(render_input_attribution_seq2seq ok CMD ${TS_CLI} render --model ${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer
            --text "The cat sat on the mat." --view input-attribution --method grad-x-input --out ${TS_CLI_OUT}/seq2seq.csv
            STDOUT_REGEX "view input-attribution, 2 figures")
ts_cli_test(render_input_attribution_encoder_only fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_bert
            --text "The capital of France is [MASK]." --view input-attribution --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "encoder-only")
ts_cli_test(render_layer_out_of_range fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view attention --layer 99 --head 0 --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "--layer 99: this model has 2 layers \\(0 to 1\\)")
ts_cli_test(render_negative_head fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view attention --layer 0 --head -3 --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "--head must be a whole number from 0")
ts_cli_test(render_ablate_missing_head fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view attention --ablate 99.99 --out ${TS_CLI_OUT}/x.svg STDERR_REGEX "--ablate 99\\.99: no such head")
ts_cli_test(render_beam_too_wide fail CMD ${TS_CLI} render --view softmax --logits 1,2 --beam 10000
            --out ${TS_CLI_OUT}/x.csv STDERR_REGEX "--beam: expected a whole number from 1 to 16, got '10000'")
ts_cli_test(render_width_not_whole fail CMD ${TS_CLI} render --view softmax --logits 1,2 --width 1e3x
            --out ${TS_CLI_OUT}/x.csv STDERR_REGEX "--width: expected a whole number from 16 to 16384, got '1e3x'")

# compare: the quantization lens on the GGUF fixtures (a Q4_0 file against the F32 one of the same weights).
ts_cli_test(compare_gguf pass CMD ${TS_CLI} compare --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --reference ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_f32.gguf --ids 1,7,42,255 --json ${TS_CLI_OUT}/cmp.json
            STDOUT_REGEX "4 tokens: mean KL\\(B \\|\\| A\\) [0-9.e-]+ nats, top-1 agreement [0-4] / 4")
# llama.cpp's arithmetic (--quant-activations int8): the Q4_0 fixture's trace and comparison run on it; a name it does
# not know is one line.
ts_cli_test(trace_gguf_int8 ok CMD ${TS_CLI} trace --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --ids 1,7,42,255 --quant-activations int8 --out ${TS_CLI_OUT}/trace_int8.safetensors
            OUTPUT ${TS_CLI_OUT}/trace_int8.safetensors)
ts_cli_test(compare_gguf_int8 pass CMD ${TS_CLI} compare --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --reference ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_f32.gguf --ids 1,7,42,255 --quant-activations int8
            STDOUT_REGEX "4 tokens: mean KL\\(B \\|\\| A\\) [0-9.e-]+ nats")
ts_cli_test(trace_quant_activations_unknown fail CMD ${TS_CLI} trace --model
            ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf --ids 1,2 --quant-activations int4
            --out ${TS_CLI_OUT}/x.safetensors STDERR_REGEX "--quant-activations expects float or int8, got 'int4'")
# The quantization lens as a render view: this file's weights in float32 under llama.cpp's arithmetic (CSV), the F32
# file as the reference (PNG through EGL is covered by the other render tests; SVG here), and the refusals.
ts_cli_test(render_quant_lens_twin ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --text "It is a truth" --view quant-lens --quant-activations int8 --figure 1 --out ${TS_CLI_OUT}/lens.csv
            OUTPUT ${TS_CLI_OUT}/lens.csv)
ts_cli_test(render_quant_lens_file ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --text "It is a truth" --view quant-lens --reference ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_f32.gguf
            --out ${TS_CLI_OUT}/lens.svg OUTPUT ${TS_CLI_OUT}/lens.svg)
ts_cli_test(render_quant_lens_nothing_quantized fail CMD ${TS_CLI} render --model
            ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_f32.gguf --text "It is" --view quant-lens --out ${TS_CLI_OUT}/x.csv
            STDERR_REGEX "this model has no quantized matrices to widen")
ts_cli_test(render_quant_lens_shapes_differ fail CMD ${TS_CLI} render --model
            ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf --text "It is" --view quant-lens
            --reference ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/gpt2_f32.gguf --out ${TS_CLI_OUT}/x.csv
            STDERR_REGEX "differs")
ts_cli_test(compare_shapes_differ fail CMD ${TS_CLI} compare --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/llama_q4_0.gguf
            --reference ${CMAKE_CURRENT_SOURCE_DIR}/golden/gguf/gpt2_f32.gguf --ids 1,2 STDERR_REGEX "vocab_size differs")

# Neurons and embedding maps (#32): the views on a small GPT-2 folder, a corpus of the repository's own text, and the
# refusals (a model without a tokenizer, a neuron beyond d_ff, a missing corpus file, chunks longer than the model's positions).
ts_cli_test(render_neuron_text ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text "abc abd abc" --view neuron-text --neuron 3 --out ${TS_CLI_OUT}/neuron.csv
            STDOUT_REGEX "view neuron-text, 1 figure")
ts_cli_test(render_neuron_examples ok CMD ${TS_CLI} render --model ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt
            --text "Mr. Darcy" --view neuron-examples --corpus ${CMAKE_SOURCE_DIR}/assets/corpus/SOURCES.md --chunk 64
            --out ${TS_CLI_OUT}/neuron_examples.csv STDOUT_REGEX "view neuron-examples, 1 figure")
ts_cli_test(render_neuron_bad_neuron fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text abc --view neuron-text --neuron 100000 --out ${TS_CLI_OUT}/x.svg STDERR_REGEX "d_ff = [0-9]+ neurons")
ts_cli_test(render_neuron_missing_corpus fail CMD ${TS_CLI} render --model ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt
            --text abc --view neuron-examples --corpus ${TS_CLI_OUT}/no_such_corpus.txt --out ${TS_CLI_OUT}/x.svg
            STDERR_REGEX "corpus file .*no_such_corpus.txt does not exist")
ts_cli_test(render_neuron_chunk_too_long fail CMD ${TS_CLI} render --model ${CMAKE_SOURCE_DIR}/assets/models/austen-gpt
            --text abc --view neuron-examples --corpus ${CMAKE_SOURCE_DIR}/assets/corpus/SOURCES.md --chunk 512
            --out ${TS_CLI_OUT}/x.svg STDERR_REGEX "longer than the model's 256 positions")
ts_cli_test(render_embedding_map ok CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --text "abc abd" --view embedding-map --out ${TS_CLI_OUT}/embedding_map.svg STDOUT_REGEX "view embedding-map")
ts_cli_test(render_residual_map_seq2seq ok CMD ${TS_CLI} render --model ${CMAKE_SOURCE_DIR}/assets/models/zh-en-transformer
            --text "The cat sat on the mat." --view residual-map --out ${TS_CLI_OUT}/residual_map.csv
            STDOUT_REGEX "view residual-map")
ts_cli_test(render_neuron_examples_no_tokenizer fail CMD ${TS_CLI} render --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/hf_gpt2
            --quiet --text abc --view neuron-examples --corpus ${CMAKE_SOURCE_DIR}/assets/corpus/SOURCES.md
            --out ${TS_CLI_OUT}/x.svg STDERR_REGEX "no tokenizer to read a corpus with")
# The training lab headless (issue #33): a settings file as the window's Training tab writes it, 20 steps, snapshots
# that open as models; a bad settings file is one line.
ts_cli_test(train_lab ok CMD ${TS_CLI} train --lab ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/lab_tiny.json --threads 1
            --out ${TS_CLI_OUT}/lab OUTPUT ${TS_CLI_OUT}/lab/snapshots/step-00000020/model.safetensors
            STDERR_REGEX "done: 20 steps in [0-9.]+ s; held-out loss [0-9.]+; best induction score 0\\.[0-9]+; 3 snapshots")
set_tests_properties(cli_train_lab PROPERTIES FIXTURES_SETUP cli_lab_run)
ts_cli_test(render_lab_snapshot ok CMD ${TS_CLI} render --model ${TS_CLI_OUT}/lab/snapshots/step-00000010
            --text "abcabc" --view heads-induction --out ${TS_CLI_OUT}/lab_heads.csv OUTPUT ${TS_CLI_OUT}/lab_heads.csv)
set_tests_properties(cli_render_lab_snapshot PROPERTIES FIXTURES_REQUIRED cli_lab_run)
ts_cli_test(render_lab_curves ok CMD ${TS_CLI} render --lab-run ${TS_CLI_OUT}/lab --view lab-curves
            --out ${TS_CLI_OUT}/lab_curves.svg OUTPUT ${TS_CLI_OUT}/lab_curves.svg)
set_tests_properties(cli_render_lab_curves PROPERTIES FIXTURES_REQUIRED cli_lab_run)
ts_cli_test(train_lab_bad_preset fail CMD ${TS_CLI} train --lab ${CMAKE_CURRENT_SOURCE_DIR}/cli/data/lab_bad_preset.json
            --out ${TS_CLI_OUT}/lab_bad STDERR_REGEX "unknown lab preset 'gpt-99l'")
ts_cli_test(train_lab_missing_file fail CMD ${TS_CLI} train --lab ${TS_CLI_OUT}/no_such_lab.json --out ${TS_CLI_OUT}/x
            STDERR_REGEX "cannot read lab settings")

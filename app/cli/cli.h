// Subcommands of the transformer-studio executable. Each returns the process exit code; errors print one line
// "transformer-studio <cmd>: <why>" to stderr and return non-zero (main catches anything that escapes).
#pragma once

namespace ts::cli {

/// The executable's usage: the window's options and one line per subcommand (`transformer-studio --help`).
extern const char* const kAppUsage;
int run_gui(int argc, char** argv);        // app/ui/gui_command.cpp (no subcommand: the window)
int run_trace(int argc, char** argv);      // app/cli/trace.cpp  (trace)
int run_tokenizer(int argc, char** argv);  // app/cli/tokenizer.cpp (tokenizer train|encode)
int run_train(int argc, char** argv);      // app/cli/train.cpp  (train)
int run_corpus(int argc, char** argv);     // app/cli/corpus.cpp (corpus build)
int run_render(int argc, char** argv);     // app/cli/render.cpp (render)
int run_eval(int argc, char** argv);       // app/cli/eval.cpp   (eval: model quality report)
int run_translate(int argc, char** argv);  // app/cli/translate.cpp (translate: encoder-decoder models)
int run_lessons(int argc, char** argv);    // app/cli/lessons.cpp (lessons list | check FILE...)
int run_compare(int argc, char** argv);    // app/cli/compare.cpp (compare: a model against a reference, e.g. quantized vs F16)
}  // namespace ts::cli

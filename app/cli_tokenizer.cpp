// `transformer-studio tokenizer ...` (stub until the tokenizer lands).
#include "app/cli.h"
#include <stdexcept>
namespace ts::cli {
int run_tokenizer(int, char**) { throw std::runtime_error("not implemented yet"); }
}  // namespace ts::cli

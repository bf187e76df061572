// `transformer-studio train|corpus ...` (stub until the trainer lands).
#include "app/cli.h"
#include <stdexcept>
namespace ts::cli {
int run_train(int, char**) { throw std::runtime_error("not implemented yet"); }
int run_corpus(int, char**) { throw std::runtime_error("not implemented yet"); }
}  // namespace ts::cli

// `transformer-studio trace` (stub until the core forward lands).
#include "app/cli.h"
#include <stdexcept>
namespace ts::cli {
int run_trace(int, char**) { throw std::runtime_error("not implemented yet"); }
}  // namespace ts::cli

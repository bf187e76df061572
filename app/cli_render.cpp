// `transformer-studio render ...` (stub until export lands).
#include "app/cli.h"
#include <stdexcept>
namespace ts::cli {
int run_render(int, char**) { throw std::runtime_error("not implemented yet"); }
}  // namespace ts::cli

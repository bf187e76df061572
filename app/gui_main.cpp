// The desktop app (stub until the app lands).
#include "app/cli.h"
#include <stdexcept>
namespace ts::cli {
int run_gui(int, char**) { throw std::runtime_error("not implemented yet"); }
}  // namespace ts::cli

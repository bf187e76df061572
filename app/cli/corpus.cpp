// `transformer-studio corpus build --out DIR`: rebuilds the default models' English corpus (Jane Austen's novels
// from r-cran-janeaustenr + WordNet example sentences from wordnet-base) by running the project's corpus script.
#include "app/cli/cli.h"
#include "app/cli/args.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace ts::cli {

int run_corpus(int argc, char** argv) {
    if (argc < 3 || std::string(argv[2]) != "build")
        throw std::invalid_argument("usage: transformer-studio corpus build --out DIR [--seed N]");
    const Args args(argc, argv, 3, {"out", "seed"});
    const std::string out = args.required("out");
    const std::string script = std::string(TS_SOURCE_DIR) + "/assets/corpus/build_corpus.py";
    if (!std::filesystem::exists(script)) throw std::runtime_error("corpus script not found: " + script);
    const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    const std::string seed = args.get("seed", "1234");
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot start python3");
    if (pid == 0) {
        execl(python.c_str(), python.c_str(), script.c_str(), "--out", out.c_str(), "--seed", seed.c_str(),
              static_cast<char*>(nullptr));
        std::perror("transformer-studio corpus: cannot run python3");
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("corpus script failed (see its message above)");
    return 0;
}

}  // namespace ts::cli

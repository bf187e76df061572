// `transformer-studio corpus build --out DIR`: rebuilds the default models' English corpus (Jane Austen's novels
// from r-cran-janeaustenr + WordNet example sentences from wordnet-base) by running the project's corpus script.
// `corpus build --parallel zh-en --out DIR`: English–Chinese pairs from Debian's zh_CN gettext catalogs
// (assets/corpus/build_parallel.py).
#include "app/cli/cli.h"
#include "app/cli/args.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace ts::cli {
namespace {

const char* const kCorpusUsage =
        "usage: transformer-studio corpus build --out DIR [--seed N]\n"
        "         English corpus of the default models (Jane Austen's novels + WordNet's example sentences).\n"
        "       transformer-studio corpus build --parallel zh-en --out DIR [--cache DIR]\n"
        "         English–Simplified Chinese pairs from the zh_CN gettext catalogs of a fixed list of Debian\n"
        "         packages (apt-get download + dpkg-deb -x into a temporary folder; nothing is installed).\n"
        "         Writes DIR/train.tsv, valid.tsv, test.tsv (English<TAB>Chinese) and stats.json; --cache keeps\n"
        "         the downloaded .debs there for the next run. Packages, licences and filtering rules:\n"
        "         assets/corpus/SOURCES.md and assets/corpus/build_parallel.py.\n";

std::string python_path() {
    return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

std::string script_path(const char* name) {
    const std::string script = std::string(TS_SOURCE_DIR) + "/assets/corpus/" + name;
    if (!std::filesystem::exists(script)) throw std::runtime_error("corpus script not found: " + script);
    return script;
}

// The Austen builder, unchanged: its own messages go straight to the terminal.
int run_austen(const Args& args) {
    const std::string out = args.required("out");
    const std::string script = script_path("build_corpus.py");
    const std::string python = python_path();
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

// Runs the pair builder with its stderr captured, so that a failure ("package X failed to download: ...") becomes
// this command's one-line error instead of two lines; progress goes to stdout as it happens.
int run_parallel(const Args& args) {
    const std::string pair = args.get("parallel");
    if (pair != "zh-en")
        throw std::invalid_argument("--parallel expects zh-en (English–Chinese pairs), got '" + pair + "'");
    const std::string out = args.required("out");
    const std::string script = script_path("build_parallel.py");
    const std::string python = python_path();
    std::vector<std::string> argv_s = {python, script, "--out", out};
    if (args.has("cache")) argv_s.insert(argv_s.end(), {"--cache", args.get("cache")});
    std::vector<char*> child_argv;
    for (std::string& a : argv_s) child_argv.push_back(a.data());
    child_argv.push_back(nullptr);

    int err_pipe[2];
    if (pipe(err_pipe) != 0) throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cannot start python3");
    if (pid == 0) {
        dup2(err_pipe[1], 2);
        close(err_pipe[0]);
        close(err_pipe[1]);
        execv(child_argv[0], child_argv.data());
        execvp("python3", child_argv.data());
        std::fprintf(stderr, "cannot run python3: %s\n", std::strerror(errno));
        _exit(127);
    }
    close(err_pipe[1]);
    std::string err;
    char buf[4096];
    for (ssize_t n; (n = read(err_pipe[0], buf, sizeof buf)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        err.append(buf, size_t(n));
    }
    close(err_pipe[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        std::fputs(err.c_str(), stderr);
        return 0;
    }
    // The script's own error is its last line ("build_parallel: why"); a Python traceback also ends with the cause.
    std::string last = err.substr(0, err.find_last_not_of(" \n\r\t") + 1);
    last = last.substr(last.rfind('\n') + 1);  // npos + 1 == 0: a single line stays whole
    const std::string prefix = "build_parallel: ";
    if (last.rfind(prefix, 0) == 0) last = last.substr(prefix.size());
    if (last.empty())
        last = "pair builder exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    throw std::runtime_error(last);
}

}  // namespace

int run_corpus(int argc, char** argv) {
    const std::string action = argc > 2 ? argv[2] : "";
    if (print_help_if_asked(argc, argv, 2, kCorpusUsage)) return 0;
    if (action == "help") {
        std::fputs(kCorpusUsage, stdout);
        return 0;
    }
    if (action != "build")
        throw std::invalid_argument("usage: transformer-studio corpus build --out DIR [--seed N] | "
                                    "corpus build --parallel zh-en --out DIR [--cache DIR] (see corpus --help)");
    const Args args(argc, argv, 3, {"out", "seed", "parallel", "cache"});
    if (args.has("parallel")) {
        if (args.has("seed")) throw std::invalid_argument("--seed applies to the English corpus, not --parallel");
        return run_parallel(args);
    }
    if (args.has("cache")) throw std::invalid_argument("--cache applies to --parallel only");
    return run_austen(args);
}

}  // namespace ts::cli

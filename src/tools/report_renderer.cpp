// Runs the report's renderer (report_renderer.hpp) as a child process.
#include "tools/report_renderer.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/env.hpp"
#include "core/error.hpp"

extern char** environ;

namespace kt::cli {

namespace {

namespace fs = std::filesystem;

// Removes a temporary file when it goes out of scope, whatever happened.
struct TemporaryFile {
  std::string path;
  ~TemporaryFile() {
    std::error_code error;
    fs::remove(path, error);
  }
};

// The directories that may hold the kerntune package: installed, <prefix>/<libdir>/python beside
// <prefix>/bin/kerntune (KT_INSTALLED_PYTHON_DIR is that path from bin/); then the source tree.
std::vector<fs::path> package_roots() {
  std::vector<fs::path> roots;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) roots.push_back((self.parent_path() / KT_INSTALLED_PYTHON_DIR).lexically_normal());
  roots.push_back(KT_SOURCE_PYTHON_DIR);
  return roots;
}

fs::path package_root() {
  std::vector<std::string> tried;
  for (const fs::path& root : package_roots()) {
    std::error_code error;
    if (fs::is_regular_file(root / "kerntune" / "report.py", error)) return root;
    tried.push_back((root / "kerntune" / "report.py").string());
  }
  throw Error(ErrorKind::kNotFound,
              fmt::format("the kerntune Python package, which renders the report, was not found "
                          "(looked for {}): install kerntune (`cmake --install`), which puts it "
                          "beside the CLI, or run the CLI of a build tree whose sources are "
                          "there; `kerntune report --json` writes the data without rendering",
                          fmt::join(tried, " and ")));
}

// Runs `argv` with the environment `env` and waits: its exit status, or -1 when it could not be
// started (errno says why). With `quiet`, its stdout and stderr go to /dev/null.
int run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                bool quiet) {
  std::vector<char*> args, vars;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& v : env) vars.push_back(const_cast<char*>(v.c_str()));
  args.push_back(nullptr);
  vars.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), vars.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// This process's environment with PYTHONPATH starting at `package_root`.
std::vector<std::string> renderer_environment(const fs::path& package_root) {
  std::vector<std::string> env;
  for (char** v = environ; *v != nullptr; ++v)
    if (std::strncmp(*v, "PYTHONPATH=", 11) != 0) env.emplace_back(*v);
  const std::optional<std::string> inherited = env::python_path();
  env.push_back("PYTHONPATH=" + package_root.string() + (inherited ? ":" + *inherited : ""));
  return env;
}

// The first python3 that imports matplotlib: $KERNTUNE_PYTHON alone when set, else python3 on
// PATH, then /usr/bin/python3 (Debian's python3-matplotlib installs for that one, which a pyenv or
// venv python3 first on PATH does not see).
std::string python_with_matplotlib(const std::vector<std::string>& env) {
  std::vector<std::string> candidates = {"python3", "/usr/bin/python3"};
  if (const std::optional<std::string> chosen = env::python_executable()) candidates = {*chosen};
  std::vector<std::string> tried;
  for (const std::string& python : candidates) {
    const int status = run_process({python, "-c", "import matplotlib"}, env, true);
    if (status == 0) return python;
    tried.push_back(status < 0 ? fmt::format("{}: {}", python, std::strerror(errno))
                               : fmt::format("{}: cannot import matplotlib", python));
  }
  throw Error(ErrorKind::kNotFound,
              fmt::format("rendering the report needs python3 with matplotlib, and none was "
                          "found ({}): install it (`apt-get install python3-matplotlib` on "
                          "Debian), or set KERNTUNE_PYTHON to a python3 that imports matplotlib; "
                          "`kerntune report --json` writes the data without rendering",
                          fmt::join(tried, "; ")));
}

}  // namespace

void render_report(const std::string& json, const std::string& out_path) {
  const fs::path root = package_root();
  const std::vector<std::string> env = renderer_environment(root);
  const std::string python = python_with_matplotlib(env);
  const std::string stem = fmt::format("{}.{}", out_path, getpid());
  TemporaryFile data{stem + ".json.tmp"}, page{stem + ".html.tmp"};
  {
    std::ofstream out(data.path, std::ios::binary);
    out << json;
    if (!out.flush())
      throw_invalid(fmt::format("cannot write beside --out '{}' ({}): {}", out_path, data.path,
                                std::strerror(errno)));
  }
  const int status = run_process(
      {python, "-m", "kerntune.report", "--data", data.path, "--out", page.path}, env, false);
  if (status != 0)
    throw Error(ErrorKind::kInternal,
                fmt::format("the renderer ({} -m kerntune.report, from {}) failed with exit "
                            "status {}; its message is above",
                            python, root.string(), status));
  std::error_code error;
  fs::rename(page.path, out_path, error);
  if (error) throw_invalid(fmt::format("cannot write --out '{}': {}", out_path, error.message()));
}

}  // namespace kt::cli

#include "options.hpp"

#include "binding.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace adi3::mpiexec {
namespace {

int parse_nprocs(const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    throw UsageError("-n expects a positive process count, got '" + text + "'");
  }
  return value;
}

double parse_timeout(const std::string& text, std::string_view origin) {
  // std::from_chars for double is available in GCC 11+, and avoids
  // strtod's locale dependence.
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0) {
    throw UsageError(std::string(origin) + " expects a positive number of seconds, got '" + text + "'");
  }
  return value;
}

// Splits "--opt=value" so both "--opt value" and "--opt=value" work.
std::pair<std::string, std::optional<std::string>> split_inline_value(const std::string& arg) {
  if (arg.rfind("--", 0) == 0) {
    auto eq = arg.find('=');
    if (eq != std::string::npos) {
      return {arg.substr(0, eq), arg.substr(eq + 1)};
    }
  }
  return {arg, std::nullopt};
}

}  // namespace

const char* timeout_from_environment(const char** name) {
  for (const char* n : {"ADI3_MPIEXEC_TIMEOUT", "MPIEXEC_TIMEOUT"}) {
    const char* v = std::getenv(n);
    if (v != nullptr && *v != '\0') {
      *name = n;
      return v;
    }
  }
  *name = "ADI3_MPIEXEC_TIMEOUT";
  return nullptr;
}

Options parse_options(const std::vector<std::string>& args, const char* timeout_env, const char* timeout_env_name) {
  Options opts;
  if (timeout_env != nullptr && *timeout_env != '\0') {
    opts.timeout_seconds = parse_timeout(timeout_env, timeout_env_name);
  }

  std::size_t i = 0;
  auto next_value = [&](const std::string& opt, std::optional<std::string>& inline_value) -> std::string {
    if (inline_value) {
      return *std::exchange(inline_value, std::nullopt);
    }
    if (i + 1 >= args.size()) {
      throw UsageError(opt + " needs a value");
    }
    return args[++i];
  };

  for (; i < args.size(); ++i) {
    auto [opt, inline_value] = split_inline_value(args[i]);
    if (opt == "--") {
      ++i;
      break;
    }
    if (opt.empty() || opt[0] != '-') {
      break;  // first program word: everything after belongs to it
    }
    if (opt == "-n" || opt == "-np" || opt == "--np") {
      opts.nprocs = parse_nprocs(next_value(opt, inline_value));
    } else if (opt == "--channel" || opt == "-channel") {
      opts.channel = next_value(opt, inline_value);
      if (opts.channel->empty()) {
        throw UsageError("--channel needs a non-empty name");
      }
    } else if (opt == "-genv" || opt == "--genv") {
      std::string key = next_value(opt, inline_value);
      if (key.empty() || key.find('=') != std::string::npos) {
        throw UsageError("-genv: invalid variable name '" + key + "'");
      }
      if (i + 1 >= args.size()) {
        throw UsageError("-genv " + key + " needs a value");
      }
      opts.genv.emplace_back(key, args[++i]);
    } else if (opt == "--tag-output" || opt == "-tag-output") {
      opts.tag_output = true;
    } else if (opt == "--timeout" || opt == "-timeout") {
      opts.timeout_seconds = parse_timeout(next_value(opt, inline_value), "--timeout");
    } else if (opt == "--bind-to" || opt == "-bind-to") {
      opts.bind_to = next_value(opt, inline_value);
      if (!parse_bind_level(*opts.bind_to)) {
        throw UsageError("--bind-to expects none, core, l3cache, numa or socket, got '" + *opts.bind_to + "'");
      }
    } else if (opt == "--map-by" || opt == "-map-by") {
      opts.map_by = next_value(opt, inline_value);
      auto level = parse_bind_level(opts.map_by);
      if (!level || *level == BindLevel::None) {
        throw UsageError("--map-by expects core, l3cache, numa or socket, got '" + opts.map_by + "'");
      }
    } else if (opt == "--hosts" || opt == "-hosts" || opt == "-host" || opt == "--host") {
      opts.hosts = next_value(opt, inline_value);
    } else if (opt == "--hostfile" || opt == "-f" || opt == "-hostfile") {
      opts.hostfile = next_value(opt, inline_value);
    } else if (opt == "--launcher" || opt == "-launcher") {
      opts.launcher = next_value(opt, inline_value);
      if (opts.launcher != "exec" && opts.launcher != "ssh") {
        throw UsageError("--launcher expects exec or ssh, got '" + opts.launcher + "'");
      }
    } else if (opt == "--iface" || opt == "-iface") {
      opts.iface = next_value(opt, inline_value);
      if (opts.iface->empty()) throw UsageError("--iface needs an interface name");
    } else if (opt == "--launcher-exec" || opt == "-launcher-exec") {
      opts.launcher_exec = next_value(opt, inline_value);
      if (opts.launcher_exec->empty()) throw UsageError("--launcher-exec needs a command");
    } else if (opt == "--report-bindings" || opt == "-report-bindings") {
      opts.report_bindings = true;
    } else if (opt == "-h" || opt == "--help") {
      opts.help = true;
      return opts;
    } else {
      throw UsageError("unknown option '" + args[i] + "'");
    }
    if (inline_value) {
      throw UsageError(opt + " does not take a value");
    }
  }

  opts.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (opts.command.empty()) {
    throw UsageError("no program given");
  }
  if (opts.nprocs == 0) {
    opts.nprocs = 1;
  }
  return opts;
}

std::string usage_text() {
  return "usage: mpiexec -n N [options] program [args...]\n"
         "  -n, -np N              number of ranks to start (default 1)\n"
         "  --channel NAME         set ADI3_CHANNEL=NAME for every rank\n"
         "  -genv NAME VALUE       set an environment variable for every rank\n"
         "  --tag-output           prefix each output line with \"[rank] \"\n"
         "  --timeout SECONDS      stop the job and fail after SECONDS\n"
         "                         (default: $ADI3_MPIEXEC_TIMEOUT, else Hydra's\n"
         "                         $MPIEXEC_TIMEOUT, else none)\n"
         "  --bind-to LEVEL        bind each rank to a core (default when ranks do not\n"
         "                         outnumber cores), l3cache, numa, socket, or none\n"
         "  --map-by LEVEL         deal ranks round robin over cores (default), l3cache,\n"
         "                         numa or socket objects\n"
         "  --report-bindings      print where each rank was bound\n"
         "  --hosts H[:N],...      place ranks on hosts, N slots each (filled in order)\n"
         "  --hostfile FILE        hosts from FILE, one per line: name, name:N, name slots=N\n"
         "  --launcher-exec CMD    start ranks on another host as 'CMD HOST prog args'\n"
         "                         (e.g. \"ip netns exec\"; the command must exec in place)\n"
         "  --launcher exec|ssh    exec (default): CMD HOST prog, execing in place with the PMI socket;\n"
         "                         ssh: CMD (default ssh) HOST 'command', PMI over TCP with the job secret\n"
         "  --iface IF             --launcher ssh: remote ranks reach the PMI port on IF's address\n"
         "  -h, --help             show this help\n";
}

}  // namespace adi3::mpiexec

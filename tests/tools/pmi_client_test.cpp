// PmiClient against an in-process launcher on a socketpair: the real
// PmiServer for the happy paths, scripted replies for the odd ones.
#include "adi3/bootstrap/pmi_client.hpp"
#include "mpiexec/pmi_server.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

namespace adi3 {
namespace {

using Responder = std::function<std::vector<std::string>(const std::string& line)>;

// Serves one client connection on a thread until the client hangs up.
class FakeLauncher {
 public:
  explicit FakeLauncher(Responder responder) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      throw std::runtime_error("socketpair");
    }
    client_fd_ = fds[0];
    server_fd_ = fds[1];
    thread_ = std::thread([this, responder = std::move(responder)] { serve(responder); });
  }
  ~FakeLauncher() {
    ::shutdown(server_fd_, SHUT_RDWR);
    thread_.join();
    ::close(server_fd_);
  }
  FakeLauncher(const FakeLauncher&) = delete;
  FakeLauncher& operator=(const FakeLauncher&) = delete;

  // Handed to PmiClient, which owns it from then on.
  int client_fd() const { return client_fd_; }
  void hang_up() { ::shutdown(server_fd_, SHUT_RDWR); }

 private:
  void serve(const Responder& responder) {
    std::string buf;
    char chunk[4096];
    for (;;) {
      ssize_t n = ::recv(server_fd_, chunk, sizeof chunk, 0);
      if (n <= 0) {
        return;
      }
      buf.append(chunk, static_cast<std::size_t>(n));
      std::size_t newline;
      while ((newline = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, newline);
        buf.erase(0, newline + 1);
        for (const auto& reply : responder(line)) {
          ::send(server_fd_, reply.data(), reply.size(), MSG_NOSIGNAL);
        }
      }
    }
  }

  int client_fd_ = -1;
  int server_fd_ = -1;
  std::thread thread_;
};

Responder real_server(mpiexec::PmiServer& server) {
  return [&server](const std::string& line) {
    std::vector<std::string> out;
    for (auto& [rank, text] : server.handle_line(0, line).replies) {
      out.push_back(text);
    }
    return out;
  };
}

TEST(PmiClient, HandshakeLearnsNameAndLimits) {
  mpiexec::PmiServer server(mpiexec::PmiServerConfig{1, "kvs_unit", 0, 0, 0});
  FakeLauncher launcher(real_server(server));
  PmiClient client(launcher.client_fd(), 0, 1);
  EXPECT_EQ(client.rank(), 0);
  EXPECT_EQ(client.size(), 1);
  EXPECT_EQ(client.kvsname(), "kvs_unit");
  EXPECT_EQ(client.max_key_length(), 63u);
  EXPECT_EQ(client.max_value_length(), 1023u);
  EXPECT_TRUE(server.initialized(0));
}

TEST(PmiClient, PutFenceGetRoundTripsArbitraryBytes) {
  mpiexec::PmiServer server(mpiexec::PmiServerConfig{1, "kvs_unit", 0, 0, 0});
  FakeLauncher launcher(real_server(server));
  PmiClient client(launcher.client_fd(), 0, 1);
  const std::string value("a b=c\n\\;%\0end", 14);
  client.kvs_put("key with spaces", value);
  client.kvs_put("empty", "");
  client.kvs_fence();
  EXPECT_EQ(client.kvs_get("key with spaces"), value);
  EXPECT_EQ(client.kvs_get("empty"), "");
  EXPECT_FALSE(client.kvs_get("absent"));
  EXPECT_FALSE(client.kvs_get(""));
  client.barrier();
  client.finalize();
  EXPECT_TRUE(server.finalized(0));
  EXPECT_THROW(client.barrier(), std::runtime_error);
}

TEST(PmiClient, EnforcesLimitsOnTheEncodedForm) {
  mpiexec::PmiServer server(mpiexec::PmiServerConfig{1, "kvs_unit", 0, 16, 32});
  FakeLauncher launcher(real_server(server));
  PmiClient client(launcher.client_fd(), 0, 1);
  EXPECT_EQ(client.max_key_length(), 15u);
  EXPECT_EQ(client.max_value_length(), 31u);
  client.kvs_put(std::string(15, 'k'), std::string(31, 'v'));
  EXPECT_THROW(client.kvs_put(std::string(16, 'k'), "v"), std::length_error);
  EXPECT_THROW(client.kvs_put("k", std::string(32, 'v')), std::length_error);
  // Eleven spaces are 33 bytes on the wire.
  EXPECT_THROW(client.kvs_put("k", std::string(11, ' ')), std::length_error);
  EXPECT_THROW(client.kvs_put("", "v"), std::length_error);
}

TEST(PmiClient, RefusedPutThrows) {
  FakeLauncher launcher([](const std::string& line) -> std::vector<std::string> {
    if (line.rfind("cmd=init", 0) == 0) return {"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"};
    if (line == "cmd=get_maxes") return {"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"};
    if (line == "cmd=get_my_kvsname") return {"cmd=my_kvsname kvsname=k\n"};
    return {"cmd=put_result rc=-1 msg=duplicate_key\n"};
  });
  PmiClient client(launcher.client_fd(), 0, 1);
  try {
    client.kvs_put("a", "b");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate_key"), std::string::npos) << e.what();
  }
}

TEST(PmiClient, WrongReplyAndLostLauncherAreErrors) {
  FakeLauncher wrong([](const std::string&) -> std::vector<std::string> { return {"cmd=surprise\n"}; });
  EXPECT_THROW(PmiClient(wrong.client_fd(), 0, 1), std::runtime_error);

  FakeLauncher silent([](const std::string&) -> std::vector<std::string> { return {}; });
  silent.hang_up();
  EXPECT_THROW(PmiClient(silent.client_fd(), 0, 1), std::runtime_error);
}

TEST(PmiClient, SingletonWithoutPmiFd) {
  // The test runner is not launched by a PMI launcher.
  if (std::getenv("PMI_FD") != nullptr) {
    GTEST_SKIP() << "running under a PMI launcher";
  }
  EXPECT_EQ(PmiClient::from_environment(), nullptr);
}

}  // namespace
}  // namespace adi3

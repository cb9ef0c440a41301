#include "channels/tcp/address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <stdexcept>
#include <vector>

namespace adi3::tcp {
namespace {

struct Interface {
  std::string name, ip;
  bool loopback;
};

std::vector<Interface> up_ipv4_interfaces() {
  std::vector<Interface> out;
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return out;
  for (ifaddrs* i = all; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    out.push_back({i->ifa_name, text, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(all);
  return out;
}

std::string names(const std::vector<Interface>& all) {
  std::string s;
  for (const auto& i : all) s += (s.empty() ? "" : ", ") + i.name + " (" + i.ip + ")";
  return s.empty() ? "none" : s;
}

std::string first_external(const std::vector<Interface>& all) {
  for (const auto& i : all) {
    if (!i.loopback) return i.ip;
  }
  return "127.0.0.1";
}

}  // namespace

ListenPlan plan_listen(const std::string& interface, const std::string& address, bool many_hosts) {
  auto all = up_ipv4_interfaces();
  if (!interface.empty()) {
    for (const auto& i : all) {
      if (i.name == interface) return {i.ip, i.ip};
    }
    throw std::runtime_error("tcp channel: ADI3_TCP_IF='" + interface +
                             "' is not an interface that is up with an IPv4 address; these are: " + names(all));
  }
  if (address == "*" || address == "0.0.0.0") return {"0.0.0.0", many_hosts ? first_external(all) : "127.0.0.1"};
  if (!address.empty()) {
    in_addr a{};
    if (inet_pton(AF_INET, address.c_str(), &a) != 1) {
      throw std::runtime_error("tcp channel: ADI3_TCP_ADDRESS='" + address +
                               "' is not an IPv4 address (or '*' for every interface)");
    }
    return {address, address};
  }
  std::string ip = many_hosts ? first_external(all) : "127.0.0.1";
  return {ip, ip};
}

}  // namespace adi3::tcp

// PMI-1 as a Bootstrap: the "simple" client of pmi_client.cpp, plus the
// node layout from the launcher's PMI_process_mapping key.
#include <stdexcept>

#include "adi3/bootstrap/common.hpp"
#include "adi3/bootstrap/pmi_client.hpp"
#include "adi3/bootstrap/wires.hpp"

namespace adi3 {
namespace {

class Pmi1Bootstrap final : public BootstrapCommon {
 public:
  explicit Pmi1Bootstrap(std::unique_ptr<PmiClient> c) : c_(std::move(c)) { take_secret_from_environment(); }

  std::string_view wire() const override { return "pmi1"; }
  int rank() const override { return c_->rank(); }
  int size() const override { return c_->size(); }
  const std::string& job_id() const override { return c_->job_id(); }
  void put(std::string_view key, std::string_view value) override { c_->kvs_put(key, value); }
  void fence() override { c_->kvs_fence(); }
  std::optional<std::string> get_from(int, std::string_view key) override { return c_->kvs_get(key); }
  void barrier() override { c_->barrier(); }
  std::size_t max_key_length() const override { return c_->max_key_length(); }
  std::size_t max_value_length() const override { return c_->max_value_length(); }
  [[noreturn]] void abort(int code, std::string_view msg) override { c_->abort(code, msg); }
  void finalize() override { c_->finalize(); }

 private:
  std::unique_ptr<PmiClient> c_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmi1_bootstrap() {
  std::unique_ptr<PmiClient> client = PmiClient::from_environment();
  if (!client) throw std::runtime_error("PMI-1: PMI_FD is not set (no PMI-1 launcher started this process)");
  auto boot = std::make_unique<Pmi1Bootstrap>(std::move(client));
  std::optional<NodeMap> map;
  if (auto text = boot->get("PMI_process_mapping")) map = parse_process_mapping(*text, boot->size());
  boot->learn_layout(std::move(map));
  return boot;
}

}  // namespace adi3

// Placeholder bodies of the window API while the implementation lands
// (every call reports MPI_ERR_OTHER "not implemented yet").
#include "adi3/device.hpp"
#include "rma/window.hpp"

namespace adi3 {
namespace rma {
class WindowState {
 public:
  Device* dev = nullptr;
  Comm comm;
};
}  // namespace rma

namespace {
int todo(Device& dev, const char* what) {
  return dev.errors().raise(ErrorClass::Other, "%s: RMA windows are not implemented yet", what);
}
}  // namespace

Window::Window(std::unique_ptr<rma::WindowState> st) : st_(std::move(st)) {}
Window::~Window() = default;

int Window::create(Device& dev, void*, std::ptrdiff_t, int, const WinInfo&, const Comm&, Window**) {
  return todo(dev, "Win_create");
}
int Window::allocate(Device& dev, std::ptrdiff_t, int, const WinInfo&, const Comm&, void**, Window**) {
  return todo(dev, "Win_allocate");
}
int Window::create_dynamic(Device& dev, const WinInfo&, const Comm&, Window**) {
  return todo(dev, "Win_create_dynamic");
}
int Window::free(Window** win) { return todo(*(*win)->st_->dev, "Win_free"); }
int Window::attach(void*, std::ptrdiff_t) { return todo(*st_->dev, "Win_attach"); }
int Window::detach(const void*) { return todo(*st_->dev, "Win_detach"); }
void* Window::base() const { return nullptr; }
std::ptrdiff_t Window::size() const { return 0; }
int Window::disp_unit() const { return 1; }
WinFlavor Window::flavor() const { return WinFlavor::Create; }
WinModel Window::model() const { return WinModel::Separate; }
const Comm& Window::comm() const { return st_->comm; }
Device& Window::device() const { return *st_->dev; }
WinInfo Window::info() const { return {}; }
int Window::set_info(const WinInfo&) { return 0; }
bool Window::passive_progress() const { return false; }
int Window::fence(int) { return todo(*st_->dev, "Win_fence"); }
int Window::post(std::span<const int>, int) { return todo(*st_->dev, "Win_post"); }
int Window::start(std::span<const int>, int) { return todo(*st_->dev, "Win_start"); }
int Window::complete() { return todo(*st_->dev, "Win_complete"); }
int Window::wait() { return todo(*st_->dev, "Win_wait"); }
int Window::test(bool*) { return todo(*st_->dev, "Win_test"); }
int Window::lock(LockType, int, int) { return todo(*st_->dev, "Win_lock"); }
int Window::unlock(int) { return todo(*st_->dev, "Win_unlock"); }
int Window::lock_all(int) { return todo(*st_->dev, "Win_lock_all"); }
int Window::unlock_all() { return todo(*st_->dev, "Win_unlock_all"); }
int Window::flush(int) { return todo(*st_->dev, "Win_flush"); }
int Window::flush_all() { return todo(*st_->dev, "Win_flush_all"); }
int Window::flush_local(int) { return todo(*st_->dev, "Win_flush_local"); }
int Window::flush_local_all() { return todo(*st_->dev, "Win_flush_local_all"); }
int Window::sync() { return todo(*st_->dev, "Win_sync"); }
int Window::put(const void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*) {
  return todo(*st_->dev, "Put");
}
int Window::get(void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*) {
  return todo(*st_->dev, "Get");
}
int Window::accumulate(const void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*,
                       const coll::Op&) {
  return todo(*st_->dev, "Accumulate");
}
int Window::get_accumulate(const void*, std::int64_t, const Datatype*, void*, std::int64_t, const Datatype*, int,
                           std::ptrdiff_t, std::int64_t, const Datatype*, const coll::Op&) {
  return todo(*st_->dev, "Get_accumulate");
}
int Window::fetch_and_op(const void*, void*, const Datatype*, int, std::ptrdiff_t, const coll::Op&) {
  return todo(*st_->dev, "Fetch_and_op");
}
int Window::compare_and_swap(const void*, const void*, void*, const Datatype*, int, std::ptrdiff_t) {
  return todo(*st_->dev, "Compare_and_swap");
}
int Window::rput(const void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*,
                 Request**) {
  return todo(*st_->dev, "Rput");
}
int Window::rget(void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*, Request**) {
  return todo(*st_->dev, "Rget");
}
int Window::raccumulate(const void*, std::int64_t, const Datatype*, int, std::ptrdiff_t, std::int64_t, const Datatype*,
                        const coll::Op&, Request**) {
  return todo(*st_->dev, "Raccumulate");
}
int Window::rget_accumulate(const void*, std::int64_t, const Datatype*, void*, std::int64_t, const Datatype*, int,
                            std::ptrdiff_t, std::int64_t, const Datatype*, const coll::Op&, Request**) {
  return todo(*st_->dev, "Rget_accumulate");
}

}  // namespace adi3

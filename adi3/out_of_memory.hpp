// An allocation that failed, saying what it was for and how large it was:
// thrown where both are known (the layers' std::bad_alloc says neither) and
// turned into MPI_ERR_NO_MEM by the MPI layer's escape (mpi/escape.cpp):
// "rank R: out of memory allocating <what> (<bytes> bytes) in MPI_Xxx".
#pragma once
#include <cstddef>
#include <new>
#include <utility>

namespace adi3 {

class OutOfMemory : public std::bad_alloc {
 public:
  // item must outlive the exception (a string literal).
  OutOfMemory(const char* item, std::size_t bytes) noexcept : item_(item), bytes_(bytes) {}
  const char* what() const noexcept override { return "adi3::OutOfMemory"; }
  const char* item() const noexcept { return item_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  const char* item_;
  std::size_t bytes_;
};

// Runs f; a std::bad_alloc out of it becomes OutOfMemory(item, bytes) (one
// already naming its item passes through: the innermost name is the best).
template <class F>
decltype(auto) allocating(const char* item, std::size_t bytes, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const OutOfMemory&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(item, bytes);
  }
}

}  // namespace adi3

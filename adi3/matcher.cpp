#include "adi3/matcher.hpp"

namespace adi3 {

namespace {
bool is_wildcard(const Request& r) { return r.source == kAnySource || r.tag == kAnyTag; }
}  // namespace

Request* Matcher::find_posted(const MatchKey& k) {
  if (posted_.size() == 0) return nullptr;  // nothing posted: no hash, no bucket
  Request* best = posted_.find(k);
  if (posted_wildcards_ == 0) return best;
  // Wildcard receives compete by posting order with the exact one.
  const MatchKey alternatives[] = {
      {k.context, k.source, kAnyTag}, {k.context, kAnySource, k.tag}, {k.context, kAnySource, kAnyTag}};
  for (const MatchKey& a : alternatives) {
    Request* c = posted_.find(a);
    if (c && (!best || c->seq < best->seq)) best = c;
  }
  return best;
}

Request* Matcher::find_unexpected(const MatchKey& p) {
  if (exact_.size() == 0) return nullptr;  // the common empty queue: no hash, no bucket
  bool any_src = p.source == kAnySource, any_tag = p.tag == kAnyTag;
  if (!any_src && !any_tag) return exact_.find(p);
  if (!any_src) return by_src_.find(p);
  if (!any_tag) return by_tag_.find(p);
  return by_ctx_.find(p);
}

void Matcher::file_unexpected(Request* u) {
  exact_.push(u);
  by_src_.push(u);
  by_tag_.push(u);
  by_ctx_.push(u);
}

void Matcher::unfile_unexpected(Request* u) {
  exact_.erase(u);
  by_src_.erase(u);
  by_tag_.erase(u);
  by_ctx_.erase(u);
}

Request* Matcher::first_unexpected() {
  Request* first = nullptr;
  exact_.for_each([&](Request& r) {
    if (!first) first = &r;
  });
  return first;
}

Request* Matcher::post_general(Request* recv) {
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  if (Request* u = find_unexpected({recv->context, recv->source, recv->tag})) {
    unfile_unexpected(u);
    return u;
  }
  recv->seq = next_seq_++;
  if (is_wildcard(*recv)) ++posted_wildcards_;
  posted_.push(recv);
  return nullptr;
}

Request* Matcher::probe(const MatchKey& pattern, bool remove, Status* status) {
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  Request* u = find_unexpected(pattern);
  if (!u) return nullptr;
  status->source = u->source;
  status->tag = u->tag;
  status->bytes = u->bytes;
  status->error = 0;
  status->cancelled = false;
  if (remove) unfile_unexpected(u);
  return u;
}

Request* Matcher::withdraw(const MatchKey& k, int peer, uint64_t sreq) {
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  Request* u = exact_.find_if(k, [&](const Request& r) { return r.peer == peer && r.remote == sreq; });
  if (u) unfile_unexpected(u);
  return u;
}

bool Matcher::cancel(Request* recv) {
  MaybeLock g(lock_, thread_safe_.load(std::memory_order_relaxed));
  if (recv != solo_ && !static_cast<QueueHook*>(recv)->is_linked()) return false;
  posted_erase(recv);
  return true;
}

}  // namespace adi3

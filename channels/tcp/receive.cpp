// The TCP channel's receive side: bytes off a connection, decoded into
// frames and delivered to the core.
//
// Most arrivals are read in chunks into the peer's staging buffer (many
// small packets per system call) and delivered from there. A payload the
// core can take in place (PacketSink::place: rendezvous data for a matched
// receive) is instead read with readv straight into the receive buffer,
// over the Segment's iovec when that buffer is noncontiguous, in pieces of
// at most kMaxRecvIov entries and across as many polls as the socket
// needs (the peer's placement state remembers how far it got). A type
// whose 64 pieces cover less than kMinDirectRead (blocks of a few bytes)
// is received through the staging buffer in chunks and unpacked instead:
// a system call per few hundred bytes would cost more than the copy.
//
// Only what the chunked read that brought a placeable packet's header
// already took of its payload is copied from the staging buffer. To keep
// that at nothing, headers are read on their own (kProbeBytes, then up to
// the header's end) while a placeable payload is expected: after the core
// asked for rendezvous data (expect_payload) and after a placed payload
// (the next rendezvous chunk usually follows). Each readv into place also
// reads the next packet's header into the staging buffer, so a stream of
// rendezvous chunks costs one system call per chunk.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "channels/tcp/tcp_channel.hpp"

namespace adi3::tcp {
namespace {

constexpr std::size_t kReadChunk = 256 * 1024;
// A readv into place must take at least this much when its iovec is full.
constexpr std::size_t kMinDirectRead = 8 * 1024;

// Writes n bytes of a placed payload at offset `at` of its placement.
void write_placed(const Placement& where, std::size_t at, const char* src, std::size_t n) {
  if (where.seg) {
    where.seg->unpack(where.first + at, where.first + at + n, src);
  } else if (where.data) {
    std::memcpy(where.data + at, src, n);
  }
}

}  // namespace

int TcpChannel::read_from(int peer, PacketSink& sink) {
  Peer& p = *peers_[static_cast<std::size_t>(peer)];
  int fd;
  {
    std::lock_guard g(p.m);
    if (p.state != State::Up) return 0;
    fd = p.fd;
  }
  // A read that took all it asked for may have left more in the socket:
  // read again, a few times at most per poll so other peers get their turn.
  int n = 0;
  for (int round = 0; round < 8; ++round) {
    const bool more = p.placing ? read_placed(peer, fd, p, sink, &n) : read_staged(peer, fd, p, sink, &n);
    if (!more) break;
  }
  return n;
}

// After a read returned r <= 0: false for "nothing now", else the peer is
// lost (end of stream or an error) and false too. Never true; a helper for
// the two read paths.
bool TcpChannel::read_failed(int peer, Peer& p, ssize_t r) {
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  std::string why = r == 0 ? (p.said_goodbye ? "" : "it closed its connection without a goodbye: its process is gone")
                           : std::string("its connection broke (") + std::strerror(errno) + ")";
  std::lock_guard g(p.m);
  lost_locked(peer, p, why);
  return false;
}

// How many bytes the next staging read takes while headers are read on
// their own: up to the end of the next packet header, or of a frame whose
// payload is not wanted in place. The staging buffer holds only the start
// of one frame here (decode_staged moved it to the front).
std::size_t TcpChannel::probe_want(const Peer& p) const {
  if (p.in_len < kFrameHeaderBytes) return kProbeBytes - p.in_len;
  Frame f;
  if (decode_frame(p.in.data(), p.in_len, limits_, &f, nullptr) != FrameCheck::NeedMore || !f.kind) return kReadChunk;
  const std::size_t hdr_end = kFrameHeaderBytes + f.hdr_bytes;
  return p.in_len < hdr_end ? hdr_end - p.in_len : f.total() - p.in_len;
}

bool TcpChannel::read_staged(int peer, int fd, Peer& p, PacketSink& sink, int* n) {
  std::size_t want = kReadChunk;
  if (p.probe.load(std::memory_order_relaxed) > 0) want = std::min(want, probe_want(p));
  if (settings_.max_read) want = std::min(want, settings_.max_read);
  if (p.in.size() - p.in_len < want) p.in.resize(p.in_len + std::max(want, kReadChunk));
  const ssize_t r = ::recv(fd, p.in.data() + p.in_len, want, 0);
  if (r <= 0) return read_failed(peer, p, r);
  p.in_len += static_cast<std::size_t>(r);
  decode_staged(peer, p, sink, n);
  return static_cast<std::size_t>(r) == want;
}

// Delivers the whole frames in the staging buffer; a frame whose header is
// in but whose payload is not may become a placement.
void TcpChannel::decode_staged(int peer, Peer& p, PacketSink& sink, int* n) {
  std::size_t at = 0;
  for (;;) {
    Frame f;
    std::string why;
    const char* here = p.in.data() + at;
    const std::size_t have = p.in_len - at;
    FrameCheck c = decode_frame(here, have, limits_, &f, &why);
    if (c == FrameCheck::Bad) {
      std::fprintf(stderr, "adi3 tcp: rank %d: rank %d sent %s; its connection is closed\n", rank_, peer, why.c_str());
      std::lock_guard g(p.m);
      lost_locked(peer, p, "it sent a malformed frame (" + why + ")");
      p.in_len = 0;
      return;
    }
    if (c == FrameCheck::NeedMore) {
      const std::size_t hdr_end = kFrameHeaderBytes + f.hdr_bytes;
      Placement where;
      if (f.kind == kFramePacket && f.payload_bytes && have >= hdr_end &&
          sink.place(peer, here + kFrameHeaderBytes, f.hdr_bytes, f.payload_bytes, &where)) {
        p.place_hdr.assign(here + kFrameHeaderBytes, here + hdr_end);
        p.where = where;
        p.place_bytes = f.payload_bytes;
        p.place_done = have - hdr_end;  // the part that came with the header
        if (p.place_done) {
          write_placed(where, 0, here + hdr_end, p.place_done);
          staged_bytes_.fetch_add(p.place_done, std::memory_order_relaxed);
        }
        p.placing = true;
        p.in_len = 0;
        return;
      }
      if (f.kind && p.in.size() < at + f.total()) p.in.resize(at + f.total() + kReadChunk);
      break;
    }
    const char* body = here + kFrameHeaderBytes;
    if (f.kind == kFrameGoodbye) {
      p.said_goodbye = true;
    } else {
      sink.on_packet(peer, body, f.hdr_bytes, body + f.hdr_bytes, f.payload_bytes);
      ++*n;
      // One frame fewer read on its own (unless expect_payload renewed it).
      int left = p.probe.load(std::memory_order_relaxed);
      if (left > 0) p.probe.compare_exchange_strong(left, left - 1, std::memory_order_relaxed);
    }
    at += f.total();
  }
  if (at) {
    std::memmove(p.in.data(), p.in.data() + at, p.in_len - at);
    p.in_len -= at;
  }
}

// One readv of the payload being placed (into its Segment's pieces or its
// contiguous range), with the staging buffer behind it for the next
// packet's header once the payload's end is within reach.
bool TcpChannel::read_placed(int peer, int fd, Peer& p, PacketSink& sink, int* n) {
  const std::size_t remaining = p.place_bytes - p.place_done;
  std::size_t span = remaining;
  if (settings_.max_read) span = std::min(span, settings_.max_read);
  iovec iov[kMaxRecvIov + 1];
  std::size_t niov = 0, asked = 0;
  bool direct = true;
  if (p.where.seg) {
    const std::size_t at = p.where.first + p.place_done;
    asked = p.where.seg->to_iov(at, at + span, iov, kMaxRecvIov, &niov);
    // Pieces too small to be worth a system call per few dozen of them
    // (tiny blocks, or elements stacked on one address): a staged chunk
    // unpacked in memory is faster.
    direct = asked > 0 && (asked == span || asked >= kMinDirectRead);
  } else if (p.where.data) {
    iov[niov++] = {p.where.data + p.place_done, span};
    asked = span;
  } else {
    direct = false;  // discarded
  }
  bool full;  // the read took all it asked for: more may be waiting
  if (!direct) {
    // No iovec for this memory (a non-native representation) or nowhere
    // to put it: through the staging buffer after all.
    asked = std::min(span, kReadChunk);
    if (p.in.size() < asked) p.in.resize(kReadChunk);
    const ssize_t r = ::recv(fd, p.in.data(), asked, 0);
    if (r <= 0) return read_failed(peer, p, r);
    write_placed(p.where, p.place_done, p.in.data(), static_cast<std::size_t>(r));
    if (p.where.seg || p.where.data) staged_bytes_.fetch_add(static_cast<std::size_t>(r), std::memory_order_relaxed);
    p.place_done += static_cast<std::size_t>(r);
    full = static_cast<std::size_t>(r) == asked;
  } else {
    std::size_t tail = 0;
    if (asked == remaining) {
      tail = kProbeBytes;
      if (settings_.max_read) tail = std::min(tail, settings_.max_read - std::min(settings_.max_read, asked));
      if (tail) {
        if (p.in.size() < tail) p.in.resize(kReadChunk);
        iov[niov++] = {p.in.data(), tail};
      }
    }
    const ssize_t r = ::readv(fd, iov, static_cast<int>(niov));
    if (r <= 0) return read_failed(peer, p, r);
    const std::size_t got = std::min(static_cast<std::size_t>(r), asked);
    p.place_done += got;
    placed_bytes_.fetch_add(got, std::memory_order_relaxed);
    p.in_len = static_cast<std::size_t>(r) - got;
    full = static_cast<std::size_t>(r) == asked + tail;
  }
  if (p.place_done < p.place_bytes) return full;
  p.placing = false;
  p.where = Placement{};
  sink.on_placed(peer, p.place_hdr.data(), p.place_hdr.size(), p.place_bytes);
  ++*n;
  p.probe.store(kProbeFrames, std::memory_order_relaxed);
  if (p.in_len) decode_staged(peer, p, sink, n);
  return full;
}

}  // namespace adi3::tcp

// Origin-side checks of RMA operations.
#include "rma/check.hpp"

#include <algorithm>

#include "adi3/device.hpp"
#include "rma/window_state.hpp"

namespace adi3::rma {
namespace {

using I = __int128;

int check_type(WindowState& w, const OpArgs& a, const Datatype* t, int64_t count, const char* which) {
  if (count < 0) {
    return w.dev.errors().raise(ErrorClass::Count, "%s to rank %d: %s count %lld is negative", a.name, a.target, which,
                                static_cast<long long>(count));
  }
  if (!t)
    return w.dev.errors().raise(ErrorClass::Type, "%s to rank %d: the %s datatype is null", a.name, a.target, which);
  if (!t->is_committed() && !t->is_predefined()) {
    return w.dev.errors().raise(ErrorClass::Type, "%s to rank %d: the %s datatype is not committed", a.name, a.target,
                                which);
  }
  return 0;
}

// A target type that is a plain run of one predefined type travels as
// (that type, count) instead of a description.
bool as_predefined(const Datatype* t, int64_t count, Builtin* b, uint64_t* n) {
  if (t->builtin_id(b)) {
    // A padded pair (MPI_DOUBLE_INT: 12 bytes in 16) is one run only alone.
    if (count > 1 && t->extent() != static_cast<std::ptrdiff_t>(t->size())) return false;
    *n = static_cast<uint64_t>(count);
    return true;
  }
  Builtin e;
  if (!coll::element_type(t, &e)) return false;
  const Datatype* et = Datatype::builtin(e);
  if (et->size() != static_cast<std::size_t>(et->extent())) return false;  // padded pairs keep their layout
  if (t->true_lb() != 0 || t->lb() != 0 || t->extent() != static_cast<std::ptrdiff_t>(t->size()) ||
      !t->is_contiguous() || t->size() % et->size()) {
    return false;
  }
  *b = e;
  *n = static_cast<uint64_t>(count) * (t->size() / et->size());
  return true;
}

// Put, get and compare_and_swap of predefined types to a window with a
// fixed base, every argument valid: what the full check below concludes,
// in a few tests. False sends the operation through the full check (which
// names any error).
bool quick_check(const WindowState& w, const OpArgs& a, Checked* out) {
  const bool cas = a.kind == Msg::Cas;
  if ((a.kind != Msg::Put && a.kind != Msg::Get && !cas) || w.flavor == WinFlavor::Dynamic) return false;
  if (a.target < 0 || a.target >= w.comm.size) return false;
  const Datatype* tt = a.ttype;
  Builtin b;
  // (padded pairs, whose runs have gaps, take the full check)
  if (!tt || !tt->builtin_id(&b) || tt->true_lb() < 0 || tt->extent() != static_cast<std::ptrdiff_t>(tt->size())) {
    return false;
  }
  int64_t count = 1;
  std::size_t tbytes = tt->size();
  if (cas) {
    const coll::TypeClass c = coll::type_class(b);
    if (c != coll::TypeClass::CInteger && c != coll::TypeClass::Logical && c != coll::TypeClass::Byte &&
        c != coll::TypeClass::MultiLanguage) {
      return false;
    }
    if (!a.origin || !a.compare || !a.result || tbytes == 0) return false;
  } else {
    const Datatype* ot = a.otype;
    if (a.ocount < 0 || a.tcount <= 0 || !ot || !ot->is_predefined()) return false;
    count = a.tcount;
    tbytes = static_cast<std::size_t>(count) * tt->size();
    if (static_cast<std::size_t>(a.ocount) * ot->size() != tbytes || tbytes == 0) return false;
    if (!(a.kind == Msg::Put ? a.origin : a.result)) return false;
  }
  const PeerWin& p = w.peers[static_cast<std::size_t>(a.target)];
  const I disp = static_cast<I>(a.disp) * p.disp_unit;
  const I lo = disp + tt->true_lb();
  const I hi = disp + static_cast<I>(count - 1) * tt->extent() + tt->true_ub();
  if (lo < 0 || hi > p.size) return false;
  out->disp_bytes = static_cast<uint64_t>(disp);
  out->bytes = tbytes;
  out->derived = false;
  out->elem = b;
  out->count = static_cast<uint64_t>(count);
  return true;
}

}  // namespace

int check_op(WindowState& w, const OpArgs& a, Checked* out) {
  if (quick_check(w, a, out)) return 0;
  ErrorLog& log = w.dev.errors();
  if (a.target != kProcNull && (a.target < 0 || a.target >= w.comm.size)) {
    return log.raise(ErrorClass::Rank, "%s: target rank %d is not a rank of the window (0..%d) nor PROC_NULL", a.name,
                     a.target, w.comm.size - 1);
  }
  const bool has_origin = a.kind != Msg::Get && !(a.op && a.op->kind() == coll::OpKind::NoOp);
  const bool has_result = a.kind == Msg::Get || a.kind == Msg::GetAcc || a.kind == Msg::Fop || a.kind == Msg::Cas;
  const bool single = a.kind == Msg::Fop || a.kind == Msg::Cas;
  if (!single) {
    if (int e = check_type(w, a, a.ttype, a.tcount, "target")) return e;
    if (a.kind == Msg::Get) {
      if (int e = check_type(w, a, a.otype, a.ocount, "origin")) return e;
    } else if (has_origin) {
      if (int e = check_type(w, a, a.otype, a.ocount, "origin")) return e;
    }
    if (a.kind == Msg::GetAcc) {
      if (int e = check_type(w, a, a.rtype, a.rcount, "result")) return e;
    }
  } else {
    if (int e = check_type(w, a, a.ttype, 1, "")) return e;
    if (!a.ttype->is_predefined()) {
      return log.raise(ErrorClass::Type, "%s to rank %d: the datatype must be predefined, not %s", a.name, a.target,
                       a.ttype->name().empty() ? "a derived type" : a.ttype->name().c_str());
    }
  }
  if (a.target == kProcNull) return 0;
  const std::size_t tbytes = single ? a.ttype->size() : static_cast<std::size_t>(a.tcount) * a.ttype->size();
  if (!single) {
    const Datatype* ot = a.kind == Msg::Get ? a.otype : a.otype;
    if (has_origin || a.kind == Msg::Get) {
      const std::size_t ob = static_cast<std::size_t>(a.ocount) * ot->size();
      if (ob != tbytes) {
        return log.raise(ErrorClass::Type,
                         "%s to rank %d: the origin side has %zu bytes of data but the target side %zu (count %lld of "
                         "%s); the type signatures must match",
                         a.name, a.target, ob, tbytes, static_cast<long long>(a.tcount),
                         a.ttype->name().empty() ? "a derived type" : a.ttype->name().c_str());
      }
    }
    if (a.kind == Msg::GetAcc) {
      const std::size_t rb = static_cast<std::size_t>(a.rcount) * a.rtype->size();
      if (rb != tbytes) {
        return log.raise(ErrorClass::Type,
                         "%s to rank %d: the result buffer takes %zu bytes but the target side has %zu", a.name,
                         a.target, rb, tbytes);
      }
    }
  }
  // A null buffer (MPI_BOTTOM) is one only for a type that does not hold
  // absolute addresses (true lower bound 0), as in point-to-point.
  auto null_buf = [&](const void* p, const Datatype* t) { return !p && tbytes && (!t || t->true_lb() == 0); };
  const Datatype* otype = single ? a.ttype : a.otype;
  const Datatype* rtype = single ? a.ttype : a.kind == Msg::GetAcc ? a.rtype : a.otype;
  if ((has_origin && null_buf(a.origin, otype)) || (has_result && null_buf(a.result, rtype))) {
    return log.raise(ErrorClass::Buffer, "%s to rank %d: the %s buffer is null for %zu bytes", a.name, a.target,
                     has_origin && null_buf(a.origin, otype) ? "origin" : "result", tbytes);
  }
  if (a.kind == Msg::Cas && !a.compare) {
    return log.raise(ErrorClass::Buffer, "%s to rank %d: the compare buffer is null", a.name, a.target);
  }
  // Accumulates: a predefined op the elements accept, one element type on every side.
  Builtin elem = Builtin::kByte;
  if (a.op || a.kind == Msg::Cas) {
    if (a.op && !a.op->is_predefined()) {
      return log.raise(ErrorClass::Op, "%s to rank %d: user-defined ops are not allowed in RMA (MPI-4.1 12.3.4)",
                       a.name, a.target);
    }
    if (a.op && a.op->kind() == coll::OpKind::NoOp && a.kind == Msg::Acc) {
      return log.raise(ErrorClass::Op, "%s to rank %d: MPI_NO_OP is only for get_accumulate and fetch_and_op", a.name,
                       a.target);
    }
    if (!coll::element_type(a.ttype, &elem)) {
      return log.raise(ErrorClass::Type, "%s to rank %d: the target datatype mixes element types", a.name, a.target);
    }
    if (a.op) {
      if (int e = coll::check_op(log, *a.op, a.ttype, true)) return e;
    }
    if (a.kind == Msg::Cas) {
      auto c = coll::type_class(elem);
      if (c != coll::TypeClass::CInteger && c != coll::TypeClass::Logical && c != coll::TypeClass::Byte &&
          c != coll::TypeClass::MultiLanguage) {
        return log.raise(ErrorClass::Type, "%s to rank %d: %s is not an integer, logical or byte type", a.name,
                         a.target, a.ttype->name().c_str());
      }
    }
    auto same = [&](const Datatype* t, const char* which) -> int {
      Builtin b;
      if (!t || single) return 0;
      if (!coll::element_type(t, &b) || b != elem) {
        return log.raise(ErrorClass::Type, "%s to rank %d: the %s elements are not the target's %s", a.name, a.target,
                         which, Datatype::builtin(elem)->name().c_str());
      }
      return 0;
    };
    if (has_origin) {
      if (int e = same(a.otype, "origin")) return e;
    }
    if (a.kind == Msg::GetAcc) {
      if (int e = same(a.rtype, "result")) return e;
    }
  }
  // The range against the target's window.
  const PeerWin& p = w.peers[static_cast<std::size_t>(a.target)];
  const int64_t count = single ? 1 : a.tcount;
  const I disp = w.flavor == WinFlavor::Dynamic ? static_cast<I>(a.disp) : static_cast<I>(a.disp) * p.disp_unit;
  // Zero bytes touch no memory: no displacement is out of range for them
  // (as for count 0; issue() completes them at once).
  if (count > 0 && tbytes > 0 && w.flavor != WinFlavor::Dynamic) {
    const Datatype* t = a.ttype;
    const I last = static_cast<I>(count - 1) * t->extent();
    const I lo = disp + std::min<I>(t->true_lb(), last + t->true_lb());
    const I hi = disp + std::max<I>(t->true_ub(), last + t->true_ub());
    if (lo < 0 || hi > p.size) {
      return log.raise(ErrorClass::RmaRange,
                       "%s to rank %d: target bytes [%lld, %lld) (disp %td x disp_unit %d, count %lld) are outside its "
                       "window of %lld bytes",
                       a.name, a.target, static_cast<long long>(lo), static_cast<long long>(hi), a.disp, p.disp_unit,
                       static_cast<long long>(count), static_cast<long long>(p.size));
    }
  }
  if (w.flavor == WinFlavor::Dynamic && a.disp < 0 && count > 0 && tbytes > 0) {
    return log.raise(ErrorClass::RmaRange, "%s to rank %d: address %td in a dynamic window is negative", a.name,
                     a.target, a.disp);
  }
  out->disp_bytes = static_cast<uint64_t>(disp);
  out->bytes = tbytes;
  Builtin b;
  uint64_t n;
  if (as_predefined(a.ttype, count, &b, &n)) {
    out->derived = false;
    out->elem = a.op || a.kind == Msg::Cas ? elem : b;
    out->count = n;
    if (a.op || a.kind == Msg::Cas) out->elem = b;  // the run's element is the accumulate element
  } else {
    // (whether its description can travel is the emulated path's question:
    // rma/ops.cpp emulate; native paths never send it)
    out->derived = true;
    out->elem = elem;
    out->count = static_cast<uint64_t>(count);
  }
  return 0;
}

}  // namespace adi3::rma

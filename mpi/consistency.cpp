// Compile-time checks that mpi.h's numbers are the core's: datatype handles
// index adi3::Builtin, error classes are adi3::ErrorClass, wildcards and
// limits match adi3/types.hpp, adi3/device.hpp and the bsend buffer.
#include <mpi.h>

#include "adi3/bsend_buffer.hpp"
#include "adi3/device.hpp"
#include "adi3/error.hpp"
#include "mpi/handle_table.hpp"
#include "rma/window.hpp"
#include "segment/builtin.hpp"
#include "segment/type_create.hpp"

namespace adi3::mpi {
namespace {

constexpr bool type_is(MPI_Datatype h, Builtin b) {
  return h == make_handle(HandleClass::Builtin, Kind::Datatype, static_cast<int>(b));
}
static_assert(type_is(MPI_CHAR, Builtin::kChar) && type_is(MPI_SIGNED_CHAR, Builtin::kSignedChar));
static_assert(type_is(MPI_UNSIGNED_CHAR, Builtin::kUnsignedChar) && type_is(MPI_SHORT, Builtin::kShort));
static_assert(type_is(MPI_UNSIGNED_SHORT, Builtin::kUnsignedShort) && type_is(MPI_INT, Builtin::kInt));
static_assert(type_is(MPI_UNSIGNED, Builtin::kUnsigned) && type_is(MPI_LONG, Builtin::kLong));
static_assert(type_is(MPI_UNSIGNED_LONG, Builtin::kUnsignedLong) && type_is(MPI_LONG_LONG, Builtin::kLongLong));
static_assert(type_is(MPI_UNSIGNED_LONG_LONG, Builtin::kUnsignedLongLong) && type_is(MPI_FLOAT, Builtin::kFloat));
static_assert(type_is(MPI_DOUBLE, Builtin::kDouble) && type_is(MPI_LONG_DOUBLE, Builtin::kLongDouble));
static_assert(type_is(MPI_WCHAR, Builtin::kWchar) && type_is(MPI_C_BOOL, Builtin::kCBool));
static_assert(type_is(MPI_INT8_T, Builtin::kInt8) && type_is(MPI_INT16_T, Builtin::kInt16));
static_assert(type_is(MPI_INT32_T, Builtin::kInt32) && type_is(MPI_INT64_T, Builtin::kInt64));
static_assert(type_is(MPI_UINT8_T, Builtin::kUint8) && type_is(MPI_UINT16_T, Builtin::kUint16));
static_assert(type_is(MPI_UINT32_T, Builtin::kUint32) && type_is(MPI_UINT64_T, Builtin::kUint64));
static_assert(type_is(MPI_AINT, Builtin::kAint) && type_is(MPI_OFFSET, Builtin::kOffset));
static_assert(type_is(MPI_COUNT, Builtin::kCount) && type_is(MPI_C_COMPLEX, Builtin::kCComplex));
static_assert(type_is(MPI_C_FLOAT_COMPLEX, Builtin::kCFloatComplex));
static_assert(type_is(MPI_C_DOUBLE_COMPLEX, Builtin::kCDoubleComplex));
static_assert(type_is(MPI_C_LONG_DOUBLE_COMPLEX, Builtin::kCLongDoubleComplex));
static_assert(type_is(MPI_BYTE, Builtin::kByte) && type_is(MPI_PACKED, Builtin::kPacked));
static_assert(type_is(MPI_CXX_BOOL, Builtin::kCxxBool));
static_assert(type_is(MPI_CXX_FLOAT_COMPLEX, Builtin::kCxxFloatComplex));
static_assert(type_is(MPI_CXX_DOUBLE_COMPLEX, Builtin::kCxxDoubleComplex));
static_assert(type_is(MPI_CXX_LONG_DOUBLE_COMPLEX, Builtin::kCxxLongDoubleComplex));
static_assert(type_is(MPI_FLOAT_INT, Builtin::kFloatInt) && type_is(MPI_DOUBLE_INT, Builtin::kDoubleInt));
static_assert(type_is(MPI_LONG_INT, Builtin::kLongInt) && type_is(MPI_2INT, Builtin::k2Int));
static_assert(type_is(MPI_SHORT_INT, Builtin::kShortInt) && type_is(MPI_LONG_DOUBLE_INT, Builtin::kLongDoubleInt));
static_assert(static_cast<int>(Builtin::kLongDoubleInt) + 1 == static_cast<int>(kNumBuiltins));

constexpr bool class_is(int c, ErrorClass e) { return c == static_cast<int>(e); }
static_assert(class_is(MPI_SUCCESS, ErrorClass::Success) && class_is(MPI_ERR_BUFFER, ErrorClass::Buffer));
static_assert(class_is(MPI_ERR_TRUNCATE, ErrorClass::Truncate) && class_is(MPI_ERR_IN_STATUS, ErrorClass::InStatus));
static_assert(class_is(MPI_ERR_PENDING, ErrorClass::Pending) && class_is(MPI_ERR_ACCESS, ErrorClass::Access));
static_assert(class_is(MPI_ERR_KEYVAL, ErrorClass::Keyval) && class_is(MPI_ERR_NO_MEM, ErrorClass::NoMem));
static_assert(class_is(MPI_ERR_INFO_KEY, ErrorClass::InfoKey) && class_is(MPI_ERR_INFO, ErrorClass::Info));
static_assert(class_is(MPI_ERR_WIN, ErrorClass::Win) && class_is(MPI_ERR_RMA_FLAVOR, ErrorClass::RmaFlavor));
static_assert(class_is(MPI_ERR_PROC_FAILED, ErrorClass::ProcFailed) && class_is(MPI_ERR_SESSION, ErrorClass::Session));
static_assert(class_is(MPI_ERR_VALUE_TOO_LARGE, ErrorClass::ValueTooLarge) &&
              class_is(MPI_ERR_ERRHANDLER, ErrorClass::Errhandler));
static_assert(class_is(MPI_T_ERR_CANNOT_INIT, ErrorClass::TCannotInit) &&
              class_is(MPI_T_ERR_PVAR_NO_ATOMIC, ErrorClass::TPvarNoAtomic));
static_assert(class_is(MPI_ERR_PROC_ABORTED, ErrorClass::ProcAborted));
static_assert(class_is(MPI_ERR_LASTCODE, ErrorClass::LastCode));

static_assert(MPI_ANY_SOURCE == kAnySource && MPI_PROC_NULL == kProcNull && MPI_ANY_TAG == kAnyTag);
static_assert(MPI_UNDEFINED == kUndefined);
static_assert(MPI_BSEND_OVERHEAD == BsendBuffer::kOverhead);
static_assert(MPI_ORDER_C == kOrderC && MPI_ORDER_FORTRAN == kOrderFortran);
static_assert(MPI_DISTRIBUTE_BLOCK == kDistributeBlock && MPI_DISTRIBUTE_CYCLIC == kDistributeCyclic);
static_assert(MPI_DISTRIBUTE_NONE == kDistributeNone && MPI_DISTRIBUTE_DFLT_DARG == kDistributeDfltDarg);
static_assert(MPI_COMBINER_RESIZED == static_cast<int>(Combiner::kResized));
static_assert(MPI_COMBINER_HINDEXED_BLOCK == static_cast<int>(Combiner::kHindexedBlock));
static_assert(sizeof(MPI_Aint) == sizeof(void*) && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8);
static_assert(MPI_COMM_WORLD == make_handle(HandleClass::Builtin, Kind::Comm, 0));
static_assert(MPI_REQUEST_NULL == make_handle(HandleClass::Null, Kind::Request, 0));
static_assert(MPI_MESSAGE_NO_PROC == make_handle(HandleClass::Builtin, Kind::Message, 0));
static_assert(MPI_KEYVAL_INVALID == make_handle(HandleClass::Null, Kind::Keyval, 0));

// One-sided communication: mpi.h's numbers are rma/window.hpp's.
static_assert(MPI_WIN_NULL == make_handle(HandleClass::Null, Kind::Win, 0));
static_assert(MPI_LOCK_EXCLUSIVE == static_cast<int>(LockType::Exclusive) &&
              MPI_LOCK_SHARED == static_cast<int>(LockType::Shared));
static_assert(MPI_MODE_NOCHECK == kModeNoCheck && MPI_MODE_NOSTORE == kModeNoStore && MPI_MODE_NOPUT == kModeNoPut);
static_assert(MPI_MODE_NOPRECEDE == kModeNoPrecede && MPI_MODE_NOSUCCEED == kModeNoSucceed);
static_assert(MPI_WIN_FLAVOR_CREATE == static_cast<int>(WinFlavor::Create) &&
              MPI_WIN_FLAVOR_ALLOCATE == static_cast<int>(WinFlavor::Allocate));
static_assert(MPI_WIN_FLAVOR_DYNAMIC == static_cast<int>(WinFlavor::Dynamic) &&
              MPI_WIN_FLAVOR_SHARED == static_cast<int>(WinFlavor::Shared));
static_assert(MPI_WIN_SEPARATE == static_cast<int>(WinModel::Separate) &&
              MPI_WIN_UNIFIED == static_cast<int>(WinModel::Unified));
static_assert(class_is(MPI_ERR_RMA_CONFLICT, ErrorClass::RmaConflict) &&
              class_is(MPI_ERR_RMA_SYNC, ErrorClass::RmaSync));
static_assert(class_is(MPI_ERR_RMA_RANGE, ErrorClass::RmaRange) && class_is(MPI_ERR_RMA_ATTACH, ErrorClass::RmaAttach));
static_assert(class_is(MPI_ERR_RMA_SHARED, ErrorClass::RmaShared) && class_is(MPI_ERR_LOCKTYPE, ErrorClass::Locktype));
static_assert(class_is(MPI_ERR_ASSERT, ErrorClass::Assert) && class_is(MPI_ERR_DISP, ErrorClass::Disp));
static_assert(class_is(MPI_ERR_SIZE, ErrorClass::Size) && class_is(MPI_ERR_BASE, ErrorClass::Base));

}  // namespace
}  // namespace adi3::mpi

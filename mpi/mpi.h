/* mpi.h of adi3: the MPI-3.1 C binding (and most of MPI-4.1: see mpi/README.md).
 *
 * Handles are ints, as in MPICH: bits 30-31 say null (0), predefined (1) or
 * user-created (2); bits 26-29 the kind of object; the rest an index. So the
 * predefined handles are compile-time constants usable in switch labels and
 * static initializers. Every MPI_ function has a PMPI_ twin (profiling). */
#ifndef ADI3_MPI_H_INCLUDED
#define ADI3_MPI_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 4
#define MPI_SUBVERSION 1
#define ADI3_MPI 1

/* ---- basic types ---- */
typedef ptrdiff_t MPI_Aint;   /* signed, pointer-sized */
typedef long long MPI_Offset; /* as in MPICH and Open MPI (printf %lld) */
typedef long long MPI_Count;
typedef int MPI_Fint; /* a Fortran INTEGER */
#define MPI_AINT_FMT_DEC_SPEC "%td"
#define MPI_AINT_FMT_HEX_SPEC "%tx"

typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Win;
typedef int MPI_File;

typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  /* not for users: received bytes and the cancelled flag */
  int adi3_count_lo;
  int adi3_count_hi;
  int adi3_cancelled;
} MPI_Status;

/* ---- handles of predefined objects ---- */
#define MPI_COMM_NULL ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF ((MPI_Comm)0x44000001)

#define MPI_GROUP_NULL ((MPI_Group)0x08000000)
#define MPI_GROUP_EMPTY ((MPI_Group)0x48000000)

#define MPI_DATATYPE_NULL ((MPI_Datatype)0x0c000000)
#define MPI_CHAR ((MPI_Datatype)0x4c000000)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x4c000001)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x4c000002)
#define MPI_SHORT ((MPI_Datatype)0x4c000003)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x4c000004)
#define MPI_INT ((MPI_Datatype)0x4c000005)
#define MPI_UNSIGNED ((MPI_Datatype)0x4c000006)
#define MPI_LONG ((MPI_Datatype)0x4c000007)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x4c000008)
#define MPI_LONG_LONG_INT ((MPI_Datatype)0x4c000009)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x4c00000a)
#define MPI_FLOAT ((MPI_Datatype)0x4c00000b)
#define MPI_DOUBLE ((MPI_Datatype)0x4c00000c)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x4c00000d)
#define MPI_WCHAR ((MPI_Datatype)0x4c00000e)
#define MPI_C_BOOL ((MPI_Datatype)0x4c00000f)
#define MPI_INT8_T ((MPI_Datatype)0x4c000010)
#define MPI_INT16_T ((MPI_Datatype)0x4c000011)
#define MPI_INT32_T ((MPI_Datatype)0x4c000012)
#define MPI_INT64_T ((MPI_Datatype)0x4c000013)
#define MPI_UINT8_T ((MPI_Datatype)0x4c000014)
#define MPI_UINT16_T ((MPI_Datatype)0x4c000015)
#define MPI_UINT32_T ((MPI_Datatype)0x4c000016)
#define MPI_UINT64_T ((MPI_Datatype)0x4c000017)
#define MPI_AINT ((MPI_Datatype)0x4c000018)
#define MPI_OFFSET ((MPI_Datatype)0x4c000019)
#define MPI_COUNT ((MPI_Datatype)0x4c00001a)
#define MPI_C_COMPLEX ((MPI_Datatype)0x4c00001b)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x4c00001c)
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x4c00001d)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c00001e)
#define MPI_BYTE ((MPI_Datatype)0x4c00001f)
#define MPI_PACKED ((MPI_Datatype)0x4c000020)
#define MPI_CXX_BOOL ((MPI_Datatype)0x4c000021)
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x4c000022)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x4c000023)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c000024)
#define MPI_FLOAT_INT ((MPI_Datatype)0x4c000025)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x4c000026)
#define MPI_LONG_INT ((MPI_Datatype)0x4c000027)
#define MPI_2INT ((MPI_Datatype)0x4c000028)
#define MPI_SHORT_INT ((MPI_Datatype)0x4c000029)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x4c00002a)
/* No Fortran binding: its types are null handles (as in an MPICH built
 * without Fortran), so C code that merely names them still compiles. */
#define MPI_CHARACTER MPI_DATATYPE_NULL
#define MPI_INTEGER MPI_DATATYPE_NULL
#define MPI_REAL MPI_DATATYPE_NULL
#define MPI_DOUBLE_PRECISION MPI_DATATYPE_NULL
#define MPI_COMPLEX MPI_DATATYPE_NULL
#define MPI_DOUBLE_COMPLEX MPI_DATATYPE_NULL
#define MPI_LOGICAL MPI_DATATYPE_NULL
#define MPI_2REAL MPI_DATATYPE_NULL
#define MPI_2DOUBLE_PRECISION MPI_DATATYPE_NULL
#define MPI_2INTEGER MPI_DATATYPE_NULL
#define MPI_INTEGER1 MPI_DATATYPE_NULL
#define MPI_INTEGER2 MPI_DATATYPE_NULL
#define MPI_INTEGER4 MPI_DATATYPE_NULL
#define MPI_INTEGER8 MPI_DATATYPE_NULL
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL2 MPI_DATATYPE_NULL
#define MPI_REAL4 MPI_DATATYPE_NULL
#define MPI_REAL8 MPI_DATATYPE_NULL
#define MPI_REAL16 MPI_DATATYPE_NULL
#define MPI_COMPLEX8 MPI_DATATYPE_NULL
#define MPI_COMPLEX16 MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL

#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x14000000)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x54000002) /* MPI-4 */

#define MPI_OP_NULL ((MPI_Op)0x18000000)
#define MPI_MAX ((MPI_Op)0x58000001)
#define MPI_MIN ((MPI_Op)0x58000002)
#define MPI_SUM ((MPI_Op)0x58000003)
#define MPI_PROD ((MPI_Op)0x58000004)
#define MPI_LAND ((MPI_Op)0x58000005)
#define MPI_BAND ((MPI_Op)0x58000006)
#define MPI_LOR ((MPI_Op)0x58000007)
#define MPI_BOR ((MPI_Op)0x58000008)
#define MPI_LXOR ((MPI_Op)0x58000009)
#define MPI_BXOR ((MPI_Op)0x5800000a)
#define MPI_MINLOC ((MPI_Op)0x5800000b)
#define MPI_MAXLOC ((MPI_Op)0x5800000c)
#define MPI_REPLACE ((MPI_Op)0x5800000d)
#define MPI_NO_OP ((MPI_Op)0x5800000e)

#define MPI_INFO_NULL ((MPI_Info)0x1c000000)
#define MPI_INFO_ENV ((MPI_Info)0x5c000001)

#define MPI_WIN_NULL ((MPI_Win)0x20000000)
#define MPI_FILE_NULL ((MPI_File)0x10000000)

#define MPI_REQUEST_NULL ((MPI_Request)0x2c000000)
#define MPI_MESSAGE_NULL ((MPI_Message)0x30000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x70000000)

/* Attribute keys (keyvals); predefined ones are set on every communicator. */
#define MPI_KEYVAL_INVALID 0x24000000
#define MPI_TAG_UB 0x64000001
#define MPI_HOST 0x64000002
#define MPI_IO 0x64000003
#define MPI_WTIME_IS_GLOBAL 0x64000004
#define MPI_UNIVERSE_SIZE 0x64000005
#define MPI_LASTUSEDCODE 0x64000006
#define MPI_APPNUM 0x64000007
#define MPI_WIN_BASE 0x64000008
#define MPI_WIN_SIZE 0x64000009
#define MPI_WIN_DISP_UNIT 0x6400000a
#define MPI_WIN_CREATE_FLAVOR 0x6400000b
#define MPI_WIN_MODEL 0x6400000c

/* ---- special values ---- */
#define MPI_ANY_SOURCE (-2)
#define MPI_PROC_NULL (-1)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_BSEND_OVERHEAD 64
#define MPI_BOTTOM ((void*)0)
#define MPI_IN_PLACE ((void*)-1)
/* MPI-4.1: buffered sends take heap space as they need it. */
#define MPI_BUFFER_AUTOMATIC ((void*)-2)
#define MPI_STATUS_IGNORE ((MPI_Status*)1)
#define MPI_STATUSES_IGNORE ((MPI_Status*)1)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_ARGV_NULL ((char**)0)
#define MPI_ARGVS_NULL ((char***)0)
#define MPI_UNWEIGHTED ((int*)1)
#define MPI_WEIGHTS_EMPTY ((int*)2)
/* A Fortran status is MPI_F_STATUS_SIZE INTEGERs laid out as MPI_Status
   (MPI_Status_c2f/f2c copy every field, the hidden ones too). */
#define MPI_F_STATUS_SIZE 6
#define MPI_F_SOURCE 0
#define MPI_F_TAG 1
#define MPI_F_ERROR 2
#define MPI_F_STATUS_IGNORE ((MPI_Fint*)1)
#define MPI_F_STATUSES_IGNORE ((MPI_Fint*)1)

#define MPI_MAX_PROCESSOR_NAME 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128

/* results of MPI_Comm_compare / MPI_Group_compare */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* ---- MPI-IO (MPI 3.1 chapter 13) ---- */
/* access modes (MPI_File_open): bit flags, none equal to the window
   assertions' bits */
#define MPI_MODE_CREATE 1
#define MPI_MODE_RDONLY 2
#define MPI_MODE_WRONLY 4
#define MPI_MODE_RDWR 8
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN 32
#define MPI_MODE_EXCL 64
#define MPI_MODE_APPEND 128
#define MPI_MODE_SEQUENTIAL 256
/* whence (MPI_File_seek) */
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-54278278)
typedef int MPI_Datarep_conversion_function(void* userbuf, MPI_Datatype datatype, int count, void* filebuf,
                                            MPI_Offset position, void* extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint* file_extent, void* extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function*)0)

/* ---- one-sided communication ---- */
/* lock types (MPI_Win_lock) */
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235
/* assertions (MPI_Win_fence, post, start, lock, lock_all): bit flags */
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
/* values of the MPI_WIN_CREATE_FLAVOR attribute */
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
/* values of the MPI_WIN_MODEL attribute */
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2

/* topology kinds (MPI_Topo_test) */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* datatype combiners */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19

#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* ---- error classes (the values of adi3::ErrorClass) ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_FILE_EXISTS 28
#define MPI_ERR_FILE_IN_USE 29
#define MPI_ERR_FILE 30
#define MPI_ERR_INFO_KEY 31
#define MPI_ERR_INFO_NOKEY 32
#define MPI_ERR_INFO_VALUE 33
#define MPI_ERR_INFO 34
#define MPI_ERR_IO 35
#define MPI_ERR_KEYVAL 36
#define MPI_ERR_LOCKTYPE 37
#define MPI_ERR_NAME 38
#define MPI_ERR_NO_MEM 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_CONFLICT 46
#define MPI_ERR_RMA_SYNC 47
#define MPI_ERR_SERVICE 48
#define MPI_ERR_SIZE 49
#define MPI_ERR_SPAWN 50
#define MPI_ERR_UNSUPPORTED_DATAREP 51
#define MPI_ERR_UNSUPPORTED_OPERATION 52
#define MPI_ERR_WIN 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_ERR_PROC_FAILED 58 /* MPI-4 fault tolerance: a peer died */
#define MPI_ERR_SESSION 59
#define MPI_ERR_VALUE_TOO_LARGE 60
#define MPI_ERR_ERRHANDLER 61
#define MPI_T_ERR_CANNOT_INIT 62
#define MPI_T_ERR_NOT_ACCESSIBLE 63
#define MPI_T_ERR_NOT_INITIALIZED 64
#define MPI_T_ERR_NOT_SUPPORTED 65
#define MPI_T_ERR_MEMORY 66
#define MPI_T_ERR_INVALID 67
#define MPI_T_ERR_INVALID_INDEX 68
#define MPI_T_ERR_INVALID_ITEM 69
#define MPI_T_ERR_INVALID_SESSION 70
#define MPI_T_ERR_INVALID_HANDLE 71
#define MPI_T_ERR_INVALID_NAME 72
#define MPI_T_ERR_OUT_OF_HANDLES 73
#define MPI_T_ERR_OUT_OF_SESSIONS 74
#define MPI_T_ERR_CVAR_SET_NOT_NOW 75
#define MPI_T_ERR_CVAR_SET_NEVER 76
#define MPI_T_ERR_PVAR_NO_WRITE 77
#define MPI_T_ERR_PVAR_NO_STARTSTOP 78
#define MPI_T_ERR_PVAR_NO_ATOMIC 79
#define MPI_ERR_PROC_ABORTED 80 /* MPI-4.0 */
#define MPI_ERR_LASTCODE 81

/* ---- callback types ---- */
typedef void MPI_User_function(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef void MPI_User_function_c(void* invec, void* inoutvec, MPI_Count* len, MPI_Datatype* datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm* comm, int* error_code, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef void MPI_Win_errhandler_function(MPI_Win* win, int* error_code, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef void MPI_File_errhandler_function(MPI_File* file, int* error_code, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void* extra_state, void* attribute_val_in,
                                        void* attribute_val_out, int* flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void* attribute_val, void* extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                        void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                          void* extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void* extra_state, void* attribute_val_in,
                                       void* attribute_val_out, int* flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void* attribute_val, void* extra_state);
typedef int MPI_Grequest_query_function(void* extra_state, MPI_Status* status);
typedef int MPI_Grequest_free_function(void* extra_state);
typedef int MPI_Grequest_cancel_function(void* extra_state, int complete);
/* MPICH-style generalized request classes (extensions): poll and wait
   functions let the progress engine advance the requests by itself. */
typedef struct adi3_mpix_grequest_class* MPIX_Grequest_class;
typedef int MPIX_Grequest_poll_function(void* extra_state, MPI_Status* status);
typedef int MPIX_Grequest_wait_function(int count, void** array_of_states, double timeout, MPI_Status* status);
/* MPI-1 style (deprecated) */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void* extra_state, void* attribute_val_in,
                              void* attribute_val_out, int* flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void* attribute_val, void* extra_state);

/* predefined attribute callbacks */
int adi3_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int*);
int adi3_comm_dup_fn(MPI_Comm, int, void*, void*, void*, int*);
int adi3_comm_null_delete_fn(MPI_Comm, int, void*, void*);
int adi3_type_null_copy_fn(MPI_Datatype, int, void*, void*, void*, int*);
int adi3_type_dup_fn(MPI_Datatype, int, void*, void*, void*, int*);
int adi3_type_null_delete_fn(MPI_Datatype, int, void*, void*);
int adi3_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int*);
int adi3_win_dup_fn(MPI_Win, int, void*, void*, void*, int*);
int adi3_win_null_delete_fn(MPI_Win, int, void*, void*);
#define MPI_COMM_NULL_COPY_FN adi3_comm_null_copy_fn
#define MPI_COMM_DUP_FN adi3_comm_dup_fn
#define MPI_COMM_NULL_DELETE_FN adi3_comm_null_delete_fn
#define MPI_TYPE_NULL_COPY_FN adi3_type_null_copy_fn
#define MPI_TYPE_DUP_FN adi3_type_dup_fn
#define MPI_TYPE_NULL_DELETE_FN adi3_type_null_delete_fn
#define MPI_WIN_NULL_COPY_FN adi3_win_null_copy_fn
#define MPI_WIN_DUP_FN adi3_win_dup_fn
#define MPI_WIN_NULL_DELETE_FN adi3_win_null_delete_fn
#define MPI_NULL_COPY_FN adi3_comm_null_copy_fn
#define MPI_DUP_FN adi3_comm_dup_fn
#define MPI_NULL_DELETE_FN adi3_comm_null_delete_fn

/* ==== MPI-4.0/4.1 additions (section owned by the mpi4 work) ==== */
typedef int MPI_Session;
#define MPI_SESSION_NULL ((MPI_Session)0x34000000)
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256
typedef void MPI_Session_errhandler_function(MPI_Session* session, int* error_code, ...);
/* MPI_Type_match_size */
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* ---- functions ---- */
/* ---- MPI_T: the tools information interface ---- */
typedef struct adi3_T_enum_s* MPI_T_enum;
typedef struct adi3_T_cvar_s* MPI_T_cvar_handle;
typedef struct adi3_T_pvar_s* MPI_T_pvar_handle;
typedef struct adi3_T_session_s* MPI_T_pvar_session;
typedef struct adi3_T_registration_s* MPI_T_event_registration;
typedef struct adi3_T_instance_s* MPI_T_event_instance;
#define MPI_T_ENUM_NULL ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)-1)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_VERBOSITY_USER_BASIC 221
#define MPI_T_VERBOSITY_USER_DETAIL 222
#define MPI_T_VERBOSITY_USER_ALL 223
#define MPI_T_VERBOSITY_TUNER_BASIC 224
#define MPI_T_VERBOSITY_TUNER_DETAIL 225
#define MPI_T_VERBOSITY_TUNER_ALL 226
#define MPI_T_VERBOSITY_MPIDEV_BASIC 227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 228
#define MPI_T_VERBOSITY_MPIDEV_ALL 229
#define MPI_T_BIND_NO_OBJECT 9700
#define MPI_T_BIND_MPI_COMM 9701
#define MPI_T_BIND_MPI_DATATYPE 9702
#define MPI_T_BIND_MPI_ERRHANDLER 9703
#define MPI_T_BIND_MPI_FILE 9704
#define MPI_T_BIND_MPI_GROUP 9705
#define MPI_T_BIND_MPI_OP 9706
#define MPI_T_BIND_MPI_REQUEST 9707
#define MPI_T_BIND_MPI_WIN 9708
#define MPI_T_BIND_MPI_MESSAGE 9709
#define MPI_T_BIND_MPI_INFO 9710
#define MPI_T_BIND_MPI_SESSION 9711
#define MPI_T_SCOPE_CONSTANT 60438
#define MPI_T_SCOPE_READONLY 60439
#define MPI_T_SCOPE_LOCAL 60440
#define MPI_T_SCOPE_GROUP 60441
#define MPI_T_SCOPE_GROUP_EQ 60442
#define MPI_T_SCOPE_ALL 60443
#define MPI_T_SCOPE_ALL_EQ 60444
#define MPI_T_PVAR_CLASS_STATE 240
#define MPI_T_PVAR_CLASS_LEVEL 241
#define MPI_T_PVAR_CLASS_SIZE 242
#define MPI_T_PVAR_CLASS_PERCENTAGE 243
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 244
#define MPI_T_PVAR_CLASS_LOWWATERMARK 245
#define MPI_T_PVAR_CLASS_COUNTER 246
#define MPI_T_PVAR_CLASS_AGGREGATE 247
#define MPI_T_PVAR_CLASS_TIMER 248
#define MPI_T_PVAR_CLASS_GENERIC 249
typedef enum MPI_T_cb_safety {
  MPI_T_CB_REQUIRE_NONE = 0,
  MPI_T_CB_REQUIRE_MPI_RESTRICTED,
  MPI_T_CB_REQUIRE_THREAD_SAFE,
  MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
} MPI_T_cb_safety;
typedef enum MPI_T_source_order { MPI_T_SOURCE_ORDERED = 0, MPI_T_SOURCE_UNORDERED } MPI_T_source_order;
typedef void MPI_T_event_cb_function(MPI_T_event_instance event_instance, MPI_T_event_registration event_registration,
                                     MPI_T_cb_safety cb_safety, void* user_data);
typedef void MPI_T_event_free_cb_function(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                          void* user_data);
typedef void MPI_T_event_dropped_cb_function(MPI_Count count, MPI_T_event_registration event_registration,
                                             int source_index, MPI_T_cb_safety cb_safety, void* user_data);

#include "mpi_proto.h"
#include "mpi4_proto.h"
#include "pmpi_proto.h"
#include "pmpi4_proto.h"

#ifdef __cplusplus
}
#endif

#endif /* ADI3_MPI_H_INCLUDED */

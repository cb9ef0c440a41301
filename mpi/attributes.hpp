// Attribute caching on communicators and datatypes: keyvals, copy
// callbacks on duplication, delete callbacks on free.
#pragma once
#include "mpi/runtime.hpp"

namespace adi3::mpi {

// A user keyval of the given kind (0 and *out, or an error code).
int get_keyval(Runtime& rt, int handle, KeyvalKind kind, KeyvalObj** out);
// Drops one reference; the handle slot goes with the last.
void release_keyval(Runtime& rt, KeyvalObj* k);
// MPI_*_free_keyval: drops the handle's reference, once. The handle stays
// valid while attributes keep the keyval; freeing it again meanwhile (a
// copy of the handle, a delete callback) does nothing, as in MPICH.
void free_keyval_handle(Runtime& rt, KeyvalObj* k);

// object is the handle passed to the callbacks (a communicator or datatype).
int set_attr(Runtime& rt, AttrList& list, KeyvalObj* k, void* value, int object);
bool find_attr(Runtime& rt, const AttrList& list, const KeyvalObj* k, void** value);
// ERR_KEYVAL-free: deleting an absent attribute is an error (INVALID
// keyval for the object) only when asked.
int delete_attr(Runtime& rt, AttrList& list, KeyvalObj* k, int object);
// Runs every delete callback (reverse order of setting) and empties list.
int delete_all_attrs(Runtime& rt, AttrList& list, int object);
// Runs the copy callbacks of `from` into `to` (duplication of object old).
int copy_attrs(Runtime& rt, const AttrList& from, int old, AttrList* to);

}  // namespace adi3::mpi

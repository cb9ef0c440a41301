/* Random nests of derived datatypes (contiguous, vector, hvector, indexed,
 * hindexed, indexed_block, hindexed_block, struct, resized, dup, subarray;
 * negative strides and displacements, zero counts and blocks) against a
 * reference type map built from the standard's definitions: the bytes
 * MPI_Pack selects and their order, MPI_Type_size, the true bounds, and the
 * same bytes through a message (sent as the type, received as MPI_BYTE, and
 * back: sent as MPI_BYTE, received as the type, every byte outside the type
 * map untouched) for counts 1 and 2. The reference takes only each
 * constructor's definition and the extents MPI reports. */
#include "mpitest.h"

#define MAXMAP 4096
#define SPAN (1 << 16) /* bytes either side of the origin */

struct map {
  int n;
  long off[MAXMAP];
  int len[MAXMAP];
};

static unsigned seed;
static int rnd(int n) { return (int)(mt_rand(&seed) % (unsigned)n); }

static MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  return ext;
}

/* out += in shifted by d, count times at stride step (bytes): 0 when full. */
static int append(struct map* out, const struct map* in, long d, int count, long step) {
  for (int c = 0; c < count; ++c)
    for (int i = 0; i < in->n; ++i) {
      if (out->n >= MAXMAP) return 0;
      out->off[out->n] = in->off[i] + d + c * step;
      out->len[out->n++] = in->len[i];
    }
  return 1;
}

static long total_len(const struct map* m) {
  long s = 0;
  for (int i = 0; i < m->n; ++i) s += m->len[i];
  return s;
}

/* A random type of depth at most depth, its map in *m; MPI_DATATYPE_NULL
 * when the map grew too large. */
static MPI_Datatype gen(int depth, struct map* m) {
  static const MPI_Datatype leaves[] = {MPI_INT, MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
  static const int sizes[] = {4, 1, 8, 2};
  m->n = 0;
  if (depth == 0 || rnd(4) == 0) {
    int k = rnd(4);
    m->off[0] = 0;
    m->len[0] = sizes[k];
    m->n = 1;
    return leaves[k];
  }
  struct map* sub = malloc(sizeof *sub);
  MPI_Datatype in = gen(depth - 1, sub), t = MPI_DATATYPE_NULL;
  if (in == MPI_DATATYPE_NULL) {
    free(sub);
    return MPI_DATATYPE_NULL;
  }
  long ext = extent_of(in);
  int ok = 1, kind = rnd(11);
  switch (kind) {
    case 0: { /* contiguous */
      int n = rnd(4);
      MPI_Type_contiguous(n, in, &t);
      ok = append(m, sub, 0, n, ext);
      break;
    }
    case 1:   /* vector: stride in extents, may be negative */
    case 2: { /* hvector: stride in bytes */
      int n = rnd(4), bl = rnd(3), s = rnd(7) - 3;
      long stride = kind == 1 ? s * ext : (long)(s * (int)ext + rnd(9) - 4);
      if (kind == 1)
        MPI_Type_vector(n, bl, s, in, &t);
      else
        MPI_Type_create_hvector(n, bl, stride, in, &t);
      for (int i = 0; i < n && ok; ++i) ok = append(m, sub, i * stride, bl, ext);
      break;
    }
    case 3:   /* indexed */
    case 4: { /* hindexed */
      int n = rnd(4), bl[4], d[4];
      MPI_Aint hd[4];
      for (int i = 0; i < n; ++i) {
        bl[i] = rnd(3);
        d[i] = rnd(9) - 4;
        hd[i] = (MPI_Aint)d[i] * ext + (kind == 4 ? rnd(5) : 0);
      }
      if (kind == 3)
        MPI_Type_indexed(n, bl, d, in, &t);
      else
        MPI_Type_create_hindexed(n, bl, hd, in, &t);
      for (int i = 0; i < n && ok; ++i) ok = append(m, sub, hd[i], bl[i], ext);
      break;
    }
    case 5:   /* indexed_block */
    case 6: { /* hindexed_block */
      int n = rnd(4), bl = rnd(3), d[4];
      MPI_Aint hd[4];
      for (int i = 0; i < n; ++i) {
        d[i] = rnd(9) - 4;
        hd[i] = (MPI_Aint)d[i] * ext + (kind == 6 ? rnd(5) : 0);
      }
      if (kind == 5)
        MPI_Type_create_indexed_block(n, bl, d, in, &t);
      else
        MPI_Type_create_hindexed_block(n, bl, hd, in, &t);
      for (int i = 0; i < n && ok; ++i) ok = append(m, sub, hd[i], bl, ext);
      break;
    }
    case 7: { /* struct of in and a second random type */
      struct map* sub2 = malloc(sizeof *sub2);
      MPI_Datatype in2 = gen(depth - 1, sub2);
      if (in2 == MPI_DATATYPE_NULL) {
        free(sub2);
        ok = 0;
        break;
      }
      int bl[2] = {rnd(3), rnd(3)};
      MPI_Aint d[2] = {rnd(17) - 8, rnd(33) - 8};
      MPI_Datatype ts[2] = {in, in2};
      MPI_Type_create_struct(2, bl, d, ts, &t);
      ok = append(m, sub, d[0], bl[0], ext) && append(m, sub2, d[1], bl[1], extent_of(in2));
      if (in2 != MPI_INT && in2 != MPI_CHAR && in2 != MPI_DOUBLE && in2 != MPI_SHORT) MPI_Type_free(&in2);
      free(sub2);
      break;
    }
    case 8: { /* resized: the map is unchanged */
      MPI_Type_create_resized(in, rnd(9) - 4, ext + rnd(9), &t);
      ok = append(m, sub, 0, 1, 0);
      break;
    }
    case 9: { /* dup */
      MPI_Type_dup(in, &t);
      ok = append(m, sub, 0, 1, 0);
      break;
    }
    default: { /* 2-D subarray, either order */
      int sizes2[2] = {1 + rnd(4), 1 + rnd(4)}, sub2[2], st[2], order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
      for (int i = 0; i < 2; ++i) {
        sub2[i] = rnd(sizes2[i] + 1);
        st[i] = rnd(sizes2[i] - sub2[i] + 1);
      }
      MPI_Type_create_subarray(2, sizes2, sub2, st, order, in, &t);
      int outer = order == MPI_ORDER_C ? 0 : 1, inner = 1 - outer;
      long row = order == MPI_ORDER_C ? sizes2[1] : sizes2[0];
      for (int i = 0; i < sub2[outer] && ok; ++i) {
        long first = (long)(st[outer] + i) * row + st[inner];
        ok = append(m, sub, first * ext, sub2[inner], ext);
      }
      break;
    }
  }
  if (in != MPI_INT && in != MPI_CHAR && in != MPI_DOUBLE && in != MPI_SHORT) MPI_Type_free(&in);
  free(sub);
  if (!ok) {
    if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    return MPI_DATATYPE_NULL;
  }
  return t;
}

static int in_window(const struct map* m, long shift) {
  for (int i = 0; i < m->n; ++i)
    if (m->off[i] + shift < -SPAN || m->off[i] + shift + m->len[i] > SPAN) return 0;
  return 1;
}

static int ran = 0, received = 0; /* cases checked, of them through the type */

static void one_case(int index) {
  static struct map m, m2;
  static unsigned char mem[2 * SPAN], packed[MAXMAP * 8 * 2], want[MAXMAP * 8 * 2], back[2 * SPAN];
  unsigned char* origin = mem + SPAN;
  MPI_Datatype t = gen(1 + rnd(4), &m);
  if (t == MPI_DATATYPE_NULL) return;
  if (t == MPI_INT || t == MPI_CHAR || t == MPI_DOUBLE || t == MPI_SHORT) return;
  CHECK_OK(MPI_Type_commit(&t));
  MPI_Aint lb, ext, tlb, text;
  MPI_Type_get_extent(t, &lb, &ext);
  MPI_Type_get_true_extent(t, &tlb, &text);
  /* count 2: the map twice, the second copy one extent on */
  m2.n = 0;
  if (!append(&m2, &m, 0, 2, ext) || !in_window(&m2, 0)) {
    MPI_Type_free(&t);
    return;
  }
  ++ran;
  int sz = -1;
  MPI_Type_size(t, &sz);
  if (sz != total_len(&m)) mt_fail(__FILE__, __LINE__, "type size", sz, total_len(&m));
  if (m.n > 0) { /* true bounds: the lowest and highest byte of the map */
    long lo = m.off[0], hi = m.off[0] + m.len[0];
    for (int i = 1; i < m.n; ++i) {
      if (m.off[i] < lo) lo = m.off[i];
      if (m.off[i] + m.len[i] > hi) hi = m.off[i] + m.len[i];
    }
    if (tlb != lo) mt_fail(__FILE__, __LINE__, "true lb", tlb, lo);
    if (text != hi - lo) mt_fail(__FILE__, __LINE__, "true extent", text, hi - lo);
  }
  for (long i = 0; i < 2 * SPAN; ++i) mem[i] = (unsigned char)(i * 7 + i / 251);
  long nb = 0;
  for (int i = 0; i < m2.n; ++i)
    for (int b = 0; b < m2.len[i]; ++b) want[nb++] = origin[m2.off[i] + b];
  int pos = 0;
  CHECK_OK(MPI_Pack(origin, 2, t, packed, sizeof packed, &pos, MPI_COMM_SELF));
  if (pos != nb) mt_fail(__FILE__, __LINE__, "packed bytes", pos, nb);
  if (pos == nb && memcmp(packed, want, (size_t)nb) != 0) {
    long at = 0;
    while (packed[at] == want[at]) ++at;
    fprintf(stderr, "[case %d] packed byte %ld differs\n", index, at);
    mt_fail(__FILE__, __LINE__, "packed bytes' values", packed[at], want[at]);
  }
  /* through a message: as the type, received as bytes */
  memset(packed, 0, sizeof packed);
  MPI_Status s;
  CHECK_OK(MPI_Sendrecv(origin, 2, t, 0, index, packed, (int)sizeof packed, MPI_BYTE, 0, index, MPI_COMM_SELF, &s));
  int got = -1;
  MPI_Get_count(&s, MPI_BYTE, &got);
  if (got != nb) mt_fail(__FILE__, __LINE__, "message bytes", got, nb);
  if (got == nb && memcmp(packed, want, (size_t)nb) != 0) mt_fail(__FILE__, __LINE__, "message bytes' values", 0, 0);
  /* and back into the type, when no byte is selected twice */
  static unsigned char seen[2 * SPAN];
  memset(seen, 0, sizeof seen);
  int overlap = 0;
  for (int i = 0; i < m2.n; ++i)
    for (int b = 0; b < m2.len[i]; ++b) overlap |= seen[SPAN + m2.off[i] + b]++;
  if (!overlap) {
    ++received;
    memset(back, 0xee, sizeof back);
    CHECK_OK(MPI_Sendrecv(want, (int)nb, MPI_BYTE, 0, index, back + SPAN, 2, t, 0, index, MPI_COMM_SELF, &s));
    for (long i = 0; i < 2 * SPAN; ++i) {
      unsigned char w = seen[i] ? mem[i] : 0xee;
      if (back[i] != w) {
        fprintf(stderr, "[case %d] received byte at %ld\n", index, i - SPAN);
        mt_fail(__FILE__, __LINE__, "received byte", back[i], w);
        break;
      }
    }
    int n = -1;
    MPI_Get_count(&s, t, &n);
    if (n != 2 && sz > 0) mt_fail(__FILE__, __LINE__, "received count", n, 2);
  }
  MPI_Type_free(&t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  seed = 2026u + 977u * (unsigned)rank;
  for (int i = 0; i < 600; ++i) one_case(i);
  /* most draws give a type worth checking; a test that checks none fails */
  if (ran < 300 || received < 150) mt_fail(__FILE__, __LINE__, "cases checked", ran, received);
  printf("[rank %d] %d types checked, %d received through the type\n", rank, ran, received);
  return mt_finish();
}

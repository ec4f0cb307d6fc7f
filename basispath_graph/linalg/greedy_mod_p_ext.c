/* The compiled loop of basispath_graph.linalg.greedy_mod_p.greedy_mask: which 0/1 rows of a CSR
 * matrix, added in order, raise the rank modulo a prime p < 2**31.
 *
 * The echelon: pivot coordinate e (the highest of its row) holds a row normalised to 1 at e
 * (start[e] = -1: no pivot). The pivot's own entry (1 at e) is not stored. The rest of the row,
 * n entries, is pool[start[e] : start[e] + n], then, unless every value is 1, its values
 * pool[start[e] + n : start[e] + 2n]: length[e] = n when values follow, -n - 1 when they are all
 * 1 (a row stored as it came, unreduced, as a peeled path is: most of a repair's echelon, so 4
 * bytes an entry there instead of 8). A row is reduced in the dense accumulator acc (all zero
 * between rows) with a binary max-heap of the coordinates it holds (in_heap flags them): the
 * leading coordinate is eliminated while it has a pivot; what a pivot row adds lies below its
 * coordinate, so each coordinate enters the heap at most once. Python's Echelon (elimination.py)
 * makes the same choice; tests/test_greedy_mod_p.py compares.
 *
 * reduce_rows(ptr, cols, p, row, used, keep, acc, in_heap, heap, start, length, pool)
 *   ptr int64[n + 1], cols int32 (coordinates 0..width-1), keep bool[n] (set for kept rows),
 *   acc int32[width] (values below p), in_heap bool[width], heap int32[width],
 *   start int64[width], length int32[width], pool int32[capacity], `used` of it filled.
 * Returns (next row, used, need): next row < n when the pool has no room for that row's
 * residual of `need` items (nothing of it stored: grow it and call again from that row).
 * Arrays are C-contiguous numpy arrays of exactly these types (greedy_mod_p.py makes them).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static void push(int32_t *heap, Py_ssize_t *size, int32_t k) {
    Py_ssize_t i = (*size)++;
    heap[i] = k;
    while (i > 0) {
        Py_ssize_t up = (i - 1) / 2;
        if (heap[up] >= heap[i]) break;
        int32_t t = heap[up]; heap[up] = heap[i]; heap[i] = t;
        i = up;
    }
}

static int32_t pop(int32_t *heap, Py_ssize_t *size) {
    int32_t top = heap[0];
    Py_ssize_t n = --(*size), i = 0;
    heap[0] = heap[n];
    for (;;) {
        Py_ssize_t big = i, left = 2 * i + 1;
        if (left < n && heap[left] > heap[big]) big = left;
        if (left + 1 < n && heap[left + 1] > heap[big]) big = left + 1;
        if (big == i) return top;
        int32_t t = heap[big]; heap[big] = heap[i]; heap[i] = t;
        i = big;
    }
}

static int64_t inverse(int64_t a, int64_t p) { /* a**(p - 2) mod p */
    int64_t result = 1, base = a % p, e = p - 2;
    while (e > 0) {
        if (e & 1) result = result * base % p;
        base = base * base % p;
        e >>= 1;
    }
    return result;
}

/* A writable buffer of `itemsize` bytes an item, at least `count` items (count < 0: any). */
static int get(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, int writable, const char *name) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0) return -1;
    if (view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "reduce_rows: %s has items of %zd bytes, not %zd", name, view->itemsize, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *reduce_rows(PyObject *self, PyObject *args) {
    PyObject *o[9];
    long long p_, row_, used_;
    if (!PyArg_ParseTuple(args, "OOLLLOOOOOOO", &o[0], &o[1], &p_, &row_, &used_, &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8]))
        return NULL;
    static const char *names[] = {"ptr", "cols", "keep", "acc", "in_heap", "heap", "start", "length", "pool"};
    static const Py_ssize_t sizes[] = {8, 4, 1, 4, 1, 4, 8, 4, 4};
    Py_buffer b[9];
    int got = 0;
    for (; got < 9; got++)
        if (get(o[got], &b[got], sizes[got], got >= 2, names[got]) < 0) break;
    if (got < 9) {
        for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
        return NULL;
    }
    const int64_t *ptr = b[0].buf;
    const int32_t *cols = b[1].buf;
    uint8_t *keep = b[2].buf;
    int32_t *acc = b[3].buf;
    uint8_t *in_heap = b[4].buf;
    int32_t *heap = b[5].buf;
    int64_t *start = b[6].buf;
    int32_t *length = b[7].buf;
    int32_t *pool = b[8].buf;
    const Py_ssize_t n = b[0].len / 8 - 1, capacity = b[8].len / 4;
    const int64_t p = p_;
    Py_ssize_t row = row_, used = used_, need = 0;

    Py_BEGIN_ALLOW_THREADS
    for (; row < n; row++) {
        Py_ssize_t size = 0;
        for (int64_t e = ptr[row]; e < ptr[row + 1]; e++) {
            int32_t k = cols[e];
            acc[k] = 1;
            in_heap[k] = 1;
            push(heap, &size, k);
        }
        int32_t lead = -1;
        while (size > 0) {
            int32_t e = pop(heap, &size);
            in_heap[e] = 0;
            int64_t f = acc[e];
            if (f == 0) continue;
            int64_t s = start[e];
            if (s < 0) { lead = e; break; } /* no pivot: independent; residual = e and the heap */
            acc[e] = 0; /* f - f * 1: the pivot's own entry */
            int64_t len = length[e];
            const int32_t *c = pool + s;
            if (len < 0) { /* every value 1 */
                for (int64_t j = 0; j < -len - 1; j++) {
                    int32_t k = c[j];
                    int64_t v = acc[k] - f;
                    if (v < 0) v += p;
                    acc[k] = (int32_t)v;
                    if (v != 0 && !in_heap[k]) {
                        in_heap[k] = 1;
                        push(heap, &size, k);
                    }
                }
            } else {
                const int32_t *values = c + len;
                for (int64_t j = 0; j < len; j++) {
                    int32_t k = c[j];
                    int64_t v = (acc[k] - f * values[j]) % p;
                    if (v < 0) v += p;
                    acc[k] = (int32_t)v;
                    if (v != 0 && !in_heap[k]) {
                        in_heap[k] = 1;
                        push(heap, &size, k);
                    }
                }
            }
        }
        if (lead < 0) continue;
        Py_ssize_t count = 0;
        int unit = 1; /* every value of the normalised row 1: each equal to the lead's */
        for (Py_ssize_t i = 0; i < size; i++) {
            int32_t v = acc[heap[i]];
            count += v != 0;
            unit &= v == 0 || v == acc[lead];
        }
        Py_ssize_t items = unit ? count : 2 * count;
        if (used + items > capacity) { /* no room: undo this row, ask for more */
            acc[lead] = 0;
            for (Py_ssize_t i = 0; i < size; i++) { acc[heap[i]] = 0; in_heap[heap[i]] = 0; }
            need = items;
            break;
        }
        int64_t scale = inverse(acc[lead], p);
        start[lead] = used;
        length[lead] = unit ? (int32_t)(-count - 1) : (int32_t)count;
        acc[lead] = 0;
        Py_ssize_t j = 0;
        for (Py_ssize_t i = 0; i < size; i++) {
            int32_t k = heap[i];
            in_heap[k] = 0;
            if (acc[k] != 0) {
                pool[used + j] = k;
                if (!unit) pool[used + count + j] = (int32_t)(acc[k] * scale % p);
                j++;
                acc[k] = 0;
            }
        }
        used += items;
        keep[row] = 1;
    }
    Py_END_ALLOW_THREADS

    for (int i = 0; i < 9; i++) PyBuffer_Release(&b[i]);
    return Py_BuildValue("(nnn)", row, used, need);
}

static PyMethodDef methods[] = {
    {"reduce_rows", reduce_rows, METH_VARARGS, "Add rows to the echelon modulo p (see the file's comment)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "greedy_mod_p_ext", "The compiled loop of greedy_mod_p.greedy_mask.", -1, methods};

PyMODINIT_FUNC PyInit_greedy_mod_p_ext(void) { return PyModule_Create(&module); }

/*
 * keepmalloc.c - a tiny malloc that never gives memory back to the kernel.
 *
 * Why: ntfs-3g built statically against musl (needed to run on a Linux 3.1
 * guest, where glibc 2.36 refuses to start) gets musl's mallocng, which
 * serves allocations above ~128 KiB with mmap and frees them with munmap.
 * ntfs-3g allocates a ~132 KiB buffer for every FUSE request, so the guest
 * kernel saw zeroed anonymous pages allocated and freed for every 4 KiB
 * written, distorting the memory experiment.  This allocator is linked
 * before libc in the static binary and replaces musl's malloc entirely.
 *
 * Design: power-of-two size classes (16 B .. 2^47), one free list per class;
 * memory is carved from large mmap'd arenas (4 MiB, or bigger for big
 * requests) and never returned: free() only pushes the block on its list.
 * One pthread mutex guards everything.  Each block has a 16-byte header
 * holding its class, so payloads stay 16-byte aligned.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>

#define HDR      16                     /* header size = base alignment */
#define MINCLS   4                      /* smallest block: 16 B (incl. header) */
#define NCLS     48
#define ARENA    (4u << 20)             /* 4 MiB */

struct hdr { size_t cls; size_t pad; };  /* pad: offset for aligned blocks */
struct node { struct node *next; };

static struct node *freelist[NCLS];
static char *cur, *end;                  /* current arena bump region */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int size_class(size_t n)
{
	size_t total;
	int c = MINCLS;
	if (n > ((size_t)1 << (NCLS - 1)) - HDR)
		return -1;
	total = n + HDR;
	while (((size_t)1 << c) < total)
		c++;
	return c;
}

/* Get a fresh block of class c from the arena (lock held). */
static void *carve(int c)
{
	size_t sz = (size_t)1 << c;
	if ((size_t)(end - cur) < sz) {
		size_t len = sz > ARENA ? sz : ARENA;
		void *p = mmap(0, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 0;
		/* The rest of the old arena is simply abandoned (rare, small). */
		cur = p;
		end = cur + len;
	}
	void *b = cur;
	cur += sz;
	return b;
}

/* calloc must not call malloc() itself: gcc would turn malloc+memset
 * into a call to calloc, i.e. infinite recursion. */
static void *alloc(size_t n)
{
	int c = size_class(n);
	struct hdr *h;
	if (c < 0) {
		errno = ENOMEM;
		return 0;
	}
	pthread_mutex_lock(&lock);
	if (freelist[c]) {
		h = (struct hdr *)freelist[c];
		freelist[c] = freelist[c]->next;
	} else {
		h = carve(c);
	}
	pthread_mutex_unlock(&lock);
	if (!h) {
		errno = ENOMEM;
		return 0;
	}
	h->cls = c;
	h->pad = 0;
	return (char *)h + HDR;
}

void *malloc(size_t n) { return alloc(n); }

/* Block header for a user pointer (aligned blocks store an offset in pad). */
static struct hdr *header(void *p)
{
	struct hdr *h = (struct hdr *)((char *)p - HDR);
	return h->cls == (size_t)-1 ? (struct hdr *)((char *)h - h->pad) : h;
}

void free(void *p)
{
	struct hdr *h;
	size_t c;
	if (!p)
		return;
	h = header(p);
	c = h->cls;                     /* read before 'next' overwrites it */
	pthread_mutex_lock(&lock);
	((struct node *)h)->next = freelist[c];
	freelist[c] = (struct node *)h;
	pthread_mutex_unlock(&lock);
}

size_t malloc_usable_size(void *p)
{
	struct hdr *h;
	if (!p)
		return 0;
	h = header(p);
	return ((size_t)1 << h->cls) - ((char *)p - (char *)h);
}

void *calloc(size_t m, size_t n)
{
	void *p;
	if (n && m > SIZE_MAX / n) {
		errno = ENOMEM;
		return 0;
	}
	p = alloc(m * n);
	if (p)
		memset(p, 0, m * n);   /* recycled blocks are not zero */
	return p;
}

void *realloc(void *p, size_t n)
{
	size_t old;
	void *q;
	if (!p)
		return malloc(n);
	old = malloc_usable_size(p);
	if (n <= old)
		return p;
	q = malloc(n);
	if (!q)
		return 0;
	memcpy(q, p, old);
	free(p);
	return q;
}

void *aligned_alloc(size_t align, size_t n)
{
	char *raw, *p;
	struct hdr *h;
	if (align & (align - 1)) {
		errno = EINVAL;
		return 0;
	}
	if (align <= HDR)
		return malloc(n);
	if (n > SIZE_MAX - align - HDR || !(raw = malloc(n + align + HDR)))
		return 0;
	p = (char *)(((uintptr_t)raw + HDR + align - 1) & ~(uintptr_t)(align - 1));
	/* Fake header just below p: cls = -1 marks it, pad = distance to real. */
	h = (struct hdr *)(p - HDR);
	h->cls = (size_t)-1;
	h->pad = (char *)h - (raw - HDR);
	return p;
}

int posix_memalign(void **res, size_t align, size_t n)
{
	void *p;
	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	if (!(p = aligned_alloc(align, n)))
		return ENOMEM;
	*res = p;
	return 0;
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }
void *valloc(size_t n) { return aligned_alloc(4096, n); }

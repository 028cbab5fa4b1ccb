// Heap-heavy work: a growing vector with realloc, a linked list with
// insertions and deletions, a binary search tree, many small allocations
// freed in a scrambled order, calloc zeroing, and a string builder.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vec {
  long *data;
  size_t len, cap;
};

static void vec_push(struct vec *v, long x) {
  if (v->len == v->cap) {
    v->cap = v->cap ? v->cap * 2 : 4;
    long *grown = realloc(v->data, v->cap * sizeof *v->data);
    if (!grown) abort();
    v->data = grown;
  }
  v->data[v->len++] = x;
}

struct list {
  int value;
  struct list *next;
};

static struct list *list_insert_sorted(struct list *head, int value) {
  struct list *n = malloc(sizeof *n);
  n->value = value;
  if (!head || value < head->value) {
    n->next = head;
    return n;
  }
  struct list *p = head;
  while (p->next && p->next->value <= value) p = p->next;
  n->next = p->next;
  p->next = n;
  return head;
}

static struct list *list_remove_if(struct list *head, int (*pred)(int)) {
  struct list **link = &head;
  while (*link) {
    if (pred((*link)->value)) {
      struct list *dead = *link;
      *link = dead->next;
      free(dead);
    } else {
      link = &(*link)->next;
    }
  }
  return head;
}

static int is_multiple_of_3(int v) { return v % 3 == 0; }

struct tree {
  int key;
  int count;
  struct tree *l, *r;
};

static struct tree *tree_add(struct tree *t, int key) {
  if (!t) {
    t = calloc(1, sizeof *t);
    t->key = key;
  }
  if (key < t->key) t->l = tree_add(t->l, key);
  else if (key > t->key) t->r = tree_add(t->r, key);
  else t->count++;
  return t;
}

static int tree_nodes(const struct tree *t) { return t ? 1 + tree_nodes(t->l) + tree_nodes(t->r) : 0; }
static void tree_free(struct tree *t) {
  if (!t) return;
  tree_free(t->l);
  tree_free(t->r);
  free(t);
}

struct builder {
  char *s;
  size_t len;
};

static void append(struct builder *b, const char *text) {
  size_t n = strlen(text);
  b->s = realloc(b->s, b->len + n + 1);
  memcpy(b->s + b->len, text, n + 1);
  b->len += n;
}

int main(void) {
  struct vec v = {0};
  for (long i = 0; i < 100000; i++) vec_push(&v, i * i % 1009);
  long sum = 0;
  for (size_t i = 0; i < v.len; i++) sum += v.data[i];
  printf("vector len=%zu cap=%zu sum=%ld\n", v.len, v.cap, sum);
  free(v.data);

  struct list *head = NULL;
  unsigned seed = 7;
  for (int i = 0; i < 2000; i++) {
    seed = seed * 1664525u + 1013904223u;
    head = list_insert_sorted(head, (int)(seed >> 20));
  }
  head = list_remove_if(head, is_multiple_of_3);
  int n = 0, first = head ? head->value : -1;
  long lsum = 0;
  for (struct list *p = head; p; p = p->next) n++, lsum += p->value;
  printf("list n=%d first=%d sum=%ld\n", n, first, lsum);
  head = list_remove_if(head, is_multiple_of_3) /* no-op */;
  while (head) {
    struct list *next = head->next;
    free(head);
    head = next;
  }

  struct tree *t = NULL;
  for (int i = 0; i < 5000; i++) t = tree_add(t, (i * 7919) % 1231);
  printf("tree nodes=%d root key=%d count=%d\n", tree_nodes(t), t->key, t->count);
  tree_free(t);

  enum { N = 4096 };
  char **blocks = malloc(N * sizeof *blocks);
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc((size_t)(i % 97) + 1);
    memset(blocks[i], i & 0x7f, (size_t)(i % 97) + 1);
  }
  long check = 0;
  for (int i = 0; i < N; i++) check += blocks[(i * 31) % N][0];
  for (int i = 0; i < N; i++) free(blocks[(i * 1237) % N]);
  free(blocks);
  printf("blocks checksum %ld\n", check);

  int *zeros = calloc(1 << 20, sizeof *zeros);
  long zsum = 0;
  for (int i = 0; i < 1 << 20; i += 512) zsum += zeros[i];
  printf("calloc sum %ld\n", zsum);
  free(zeros);

  struct builder b = {0};
  for (int i = 0; i < 50; i++) {
    char part[16];
    snprintf(part, sizeof part, "%d,", i * i);
    append(&b, part);
  }
  printf("builder %zu chars, ends with %s\n", b.len, b.s + b.len - 10);
  free(b.s);
  return 0;
}

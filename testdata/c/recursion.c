// Recursion: Ackermann (small arguments), naive Fibonacci, mutual
// recursion, Towers of Hanoi, recursive permutation generation and a
// recursive descent over a tree built on the stack.
#include <stdio.h>

static unsigned long ackermann(unsigned long m, unsigned long n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int is_odd(unsigned n);
static int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static int moves;
static void hanoi(int n, char from, char to, char via, int print) {
  if (n == 0) return;
  hanoi(n - 1, from, via, to, print);
  moves++;
  if (print) printf("move %d %c->%c\n", n, from, to);
  hanoi(n - 1, via, to, from, print);
}

static void permute(char *s, int k, int n, int *count) {
  if (k == n) {
    if (++*count <= 8) printf("%s ", s);
    return;
  }
  for (int i = k; i < n; i++) {
    char t = s[k]; s[k] = s[i]; s[i] = t;
    permute(s, k + 1, n, count);
    t = s[k]; s[k] = s[i]; s[i] = t;
  }
}

struct node {
  int value;
  struct node *left, *right;
};

static int tree_sum(const struct node *n) { return n ? n->value + tree_sum(n->left) + tree_sum(n->right) : 0; }
static int tree_depth(const struct node *n) {
  if (!n) return 0;
  int l = tree_depth(n->left), r = tree_depth(n->right);
  return 1 + (l > r ? l : r);
}

static int build_and_measure(int depth, struct node *parent_slot_owner) {
  (void)parent_slot_owner;
  if (depth == 0) return 0;
  struct node leaf = {depth, NULL, NULL};
  struct node root = {depth * 10, &leaf, NULL};
  return tree_sum(&root) + tree_depth(&root) + build_and_measure(depth - 1, &root);
}

int main(void) {
  for (unsigned long m = 0; m <= 3; m++)
    for (unsigned long n = 0; n <= 3; n++) printf("A(%lu,%lu)=%lu%c", m, n, ackermann(m, n), n == 3 ? '\n' : ' ');
  printf("A(2,200)=%lu A(3,6)=%lu\n", ackermann(2, 200), ackermann(3, 6));
  printf("fib(25)=%ld\n", fib(25));
  printf("even(10001)=%d odd(777)=%d\n", is_even(10001), is_odd(777));
  hanoi(3, 'A', 'C', 'B', 1);
  moves = 0;
  hanoi(16, 'A', 'C', 'B', 0);
  printf("hanoi(16) moves=%d\n", moves);
  char letters[] = "abcd";
  int count = 0;
  permute(letters, 0, 4, &count);
  printf("\n%d permutations\n", count);
  printf("tree measure %d\n", build_and_measure(50, NULL));
  return 0;
}

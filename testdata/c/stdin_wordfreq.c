// jitrun-test: stdin=the quick brown fox\njumps over the lazy dog\n\nThe dog barks; the fox runs.\nlast line without newline
// Reads stdin: line, word and character counts, then word frequencies
// (case-folded) in a small hash table, sorted by count then word.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
  char *word;
  int count;
  struct entry *next;
};

static struct entry *buckets[64];

static unsigned hash(const char *s) {
  unsigned h = 5381;
  while (*s) h = h * 33 + (unsigned char)*s++;
  return h % 64;
}

static void add_word(const char *w) {
  struct entry **b = &buckets[hash(w)];
  for (struct entry *e = *b; e; e = e->next)
    if (strcmp(e->word, w) == 0) {
      e->count++;
      return;
    }
  struct entry *e = malloc(sizeof *e);
  e->word = strdup(w);
  e->count = 1;
  e->next = *b;
  *b = e;
}

static int by_count(const void *a, const void *b) {
  const struct entry *x = *(struct entry *const *)a, *y = *(struct entry *const *)b;
  if (x->count != y->count) return y->count - x->count;
  return strcmp(x->word, y->word);
}

int main(void) {
  char line[256];
  int lines = 0, words = 0;
  long chars = 0;
  while (fgets(line, sizeof line, stdin)) {
    lines++;
    chars += (long)strlen(line);
    char word[64];
    int len = 0;
    for (char *p = line;; p++) {
      if (isalpha((unsigned char)*p)) {
        if (len < 63) word[len++] = (char)tolower((unsigned char)*p);
      } else {
        if (len) {
          word[len] = 0;
          add_word(word);
          words++;
          len = 0;
        }
        if (!*p) break;
      }
    }
  }
  printf("lines=%d words=%d chars=%ld eof=%d error=%d\n", lines, words, chars, feof(stdin) != 0, ferror(stdin) != 0);
  struct entry *all[256];
  int n = 0;
  for (int i = 0; i < 64; i++)
    for (struct entry *e = buckets[i]; e; e = e->next) all[n++] = e;
  qsort(all, n, sizeof all[0], by_count);
  for (int i = 0; i < n; i++) printf("%3d %s\n", all[i]->count, all[i]->word);
  return 0;
}

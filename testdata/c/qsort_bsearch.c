// qsort and bsearch with several comparators, a struct array sorted by
// two keys, and a comparator that counts its calls through a global.
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct person {
  char name[16];
  int age;
  double score;
};

static unsigned long comparisons;

static int by_int(const void *a, const void *b) {
  comparisons++;
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int by_int_desc(const void *a, const void *b) { return by_int(b, a); }

static int by_string(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_age_then_name(const void *a, const void *b) {
  const struct person *p = a, *q = b;
  if (p->age != q->age) return p->age - q->age;
  return strcmp(p->name, q->name);
}

static int by_score(const void *a, const void *b) {
  double x = ((const struct person *)a)->score, y = ((const struct person *)b)->score;
  return (x > y) - (x < y);
}

int main(void) {
  int numbers[200];
  unsigned seed = 12345;
  for (int i = 0; i < 200; i++) {
    seed = seed * 1103515245u + 12345u;
    numbers[i] = (int)((seed >> 16) % 1000) - 500;
  }
  qsort(numbers, 200, sizeof numbers[0], by_int);
  for (int i = 0; i < 200; i += 20) printf("%d ", numbers[i]);
  printf("\nsorted with %s comparisons\n", comparisons > 0 ? "some" : "no");
  for (int i = 1; i < 200; i++)
    if (numbers[i - 1] > numbers[i]) puts("NOT SORTED");

  int keys[] = {numbers[0], numbers[77], numbers[199], 10000, -10000};
  for (int i = 0; i < 5; i++) {
    int *hit = bsearch(&keys[i], numbers, 200, sizeof numbers[0], by_int);
    printf("bsearch %d: %s\n", keys[i], hit ? "found" : "missing");
  }
  qsort(numbers, 200, sizeof numbers[0], by_int_desc);
  printf("desc first %d last %d\n", numbers[0], numbers[199]);

  const char *words[] = {"pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape"};
  size_t nwords = sizeof words / sizeof words[0];
  qsort(words, nwords, sizeof words[0], by_string);
  for (size_t i = 0; i < nwords; i++) printf("%s%c", words[i], i + 1 < nwords ? ' ' : '\n');
  const char *key = "fig";
  const char **found = bsearch(&key, words, nwords, sizeof words[0], by_string);
  printf("fig at index %td\n", found ? found - words : (ptrdiff_t)-1);

  struct person people[] = {
      {"mallory", 30, 1.5}, {"alice", 25, 9.25}, {"bob", 30, 7.0}, {"carol", 25, 3.5}, {"dave", 41, 6.75},
  };
  size_t np = sizeof people / sizeof people[0];
  qsort(people, np, sizeof people[0], by_age_then_name);
  for (size_t i = 0; i < np; i++) printf("%s(%d) ", people[i].name, people[i].age);
  putchar('\n');
  qsort(people, np, sizeof people[0], by_score);
  for (size_t i = 0; i < np; i++) printf("%s:%.2f ", people[i].name, people[i].score);
  putchar('\n');
  return 0;
}

// Dense switch statements that compilers turn into jump tables (in
// .rodata, with relative or absolute entries depending on the code model),
// a switch over chars, and computed goto with a label table.
#include <stdio.h>

static const char *day_name(int d) {
  switch (d) {
  case 0: return "sunday";
  case 1: return "monday";
  case 2: return "tuesday";
  case 3: return "wednesday";
  case 4: return "thursday";
  case 5: return "friday";
  case 6: return "saturday";
  default: return "never";
  }
}

static int weird(int x) {
  switch (x) {
  case 10: return x * 3 + 1;
  case 11: return x - 7;
  case 12: return x ^ 0x55;
  case 13: return x << 3;
  case 14: return -x;
  case 15: return x % 4;
  case 16: return x / 3;
  case 17: return 100;
  case 18: return x + 1000;
  case 19: return 1 - x;
  case 21: return 21;
  case 22: return 2222;
  default: return 0;
  }
}

static int classify(char c) {
  switch (c) {
  case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
  case '0': case '1': case '2': case '3': case '4':
  case '5': case '6': case '7': case '8': case '9': return 2;
  case ' ': case '\t': case '\n': return 3;
  case '.': case ',': case ';': case '!': case '?': return 4;
  default: return 0;
  }
}

static long run_bytecode(const unsigned char *code) {
  static void *const labels[] = {&&op_push, &&op_add, &&op_mul, &&op_dup, &&op_halt};
  long stack[16];
  int sp = 0;
  const unsigned char *pc = code;
#define NEXT goto *labels[*pc++]
  NEXT;
op_push:
  stack[sp++] = *pc++;
  NEXT;
op_add:
  sp--;
  stack[sp - 1] += stack[sp];
  NEXT;
op_mul:
  sp--;
  stack[sp - 1] *= stack[sp];
  NEXT;
op_dup:
  stack[sp] = stack[sp - 1];
  sp++;
  NEXT;
op_halt:
  return stack[sp - 1];
#undef NEXT
}

int main(void) {
  for (int d = -1; d <= 7; d++) printf("%d=%s ", d, day_name(d));
  putchar('\n');
  long total = 0;
  for (int x = 0; x < 30; x++) {
    total = total * 31 + weird(x);
    printf("%d ", weird(x));
  }
  printf("\nchecksum %ld\n", total);
  int counts[5] = {0};
  for (const char *s = "Hello, world! 2024 is the year; 42 apples.\n"; *s; s++) counts[classify(*s)]++;
  printf("other=%d vowels=%d digits=%d space=%d punct=%d\n", counts[0], counts[1], counts[2], counts[3], counts[4]);
  /* (3 + 4) * 5, dup, add = 70 */
  static const unsigned char prog[] = {0, 3, 0, 4, 1, 0, 5, 2, 3, 1, 4};
  printf("bytecode result %ld\n", run_bytecode(prog));
  return 0;
}

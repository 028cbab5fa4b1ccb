struct item {
  const char *name;
  int (*handler)(int);
  int priority;
};

#define ITEM(n, h, p) \
  static const struct item item_##n __attribute__((used, section("my_items"), aligned(8))) = {#n, h, p}

static int negate(int x) { return -x; }
static int square(int x) { return x * x; }
int plus_one(int x) { return x + 1; }

ITEM(negator, negate, 1);
ITEM(squarer, square, 9);
ITEM(incrementer, plus_one, 3);

static const int more_numbers[] __attribute__((used, section("my_numbers"))) = {1, 2, 3, 4};

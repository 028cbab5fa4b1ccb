#define BIG (12 << 20)

const unsigned char big_table[BIG] = {[0] = 1, [4096] = 2, [8192 * 3] = 5, [BIG - 1] = 3};

static int twice(int x) { return 2 * x; }
static int square(int x) { return x * x; }
static int negate(int x) { return -x; }

const char *const names[] = {"twice", "square", "negate", 0};
int (*ops[])(int) = {twice, square, negate};

static const char *const descriptions[] = {"first of three", "second of three", "third of three"};
const char *describe(int i) { return descriptions[i]; }

int triple(int x) { return 3 * x; }
int square(int x) { return x * x; }

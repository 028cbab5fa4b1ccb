int compute(int x) { return x * 10; }

/* Calls its own object's compute: ld does not wrap this reference. */
int compute_twice(int x) { return compute(x) + compute(x); }

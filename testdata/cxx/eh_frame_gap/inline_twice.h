// An inline function both a_first.cc and b_second.cc keep out of line: the
// link keeps one copy, and drops the other's frame description (FDE),
// which shrinks b_second.o's .eh_frame by 20 bytes.
__attribute__((noinline)) inline int times_seven(int x) { return x * 7; }

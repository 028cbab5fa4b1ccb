#include "inline_twice.h"
int use_second(int x) { return times_seven(x) + 2; }
int use_second_again(int x) { return x + 3; }

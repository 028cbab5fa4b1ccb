/* A library that calls back into the program and uses its variables:
   natively the executable defines these names for it
   (program_symbols_host.c). It also defines a function and a variable
   the program defines too: natively the executable's take their place in
   the library's own references (ELF symbol interposition). */
#include <stdio.h>

extern int app_value;
extern const char *app_name;
extern int app_table[4];
int app_callback(int x);
void app_log(const char *message) __attribute__((weak));

int lib_run(int x) {
    app_value += 1;
    app_table[2] = app_callback(app_table[1]);
    if (app_log)
        app_log("from the library");
    return app_callback(x) + app_value;
}

const char *lib_name(void) { return app_name; }
int *lib_value_address(void) { return &app_value; }

int lib_helper(void) { return 1; }
int lib_setting = 1;
int lib_calls_helper(void) { return lib_helper() * 10 + lib_setting; }

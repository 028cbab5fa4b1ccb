const char *geo_unit(void) { return "cm"; }

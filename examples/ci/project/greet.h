const char *greeting (void);

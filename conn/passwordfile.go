package conn

// ReadPasswordFile reads the password on the first line of the file at path, which the user
// gave to flag, as New reads PasswordFile: an error wraps ErrBadInput, and one for a file that
// cannot be read names flag, never path (the password itself may have been typed there).
func ReadPasswordFile(flag, path string) (string, error) { return readPassword(flag, path) }

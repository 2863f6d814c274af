// Package layers checks that the files of one Go package are layered: that the graph "file A
// uses a name declared in file B" over the package's non-test files has no cycle, so that each
// file can be read knowing only the files below it.
//
// File A uses file B when an identifier in A refers to a constant, type, variable, function,
// method or struct field declared in B. A method declared in A on a type declared in B is a use
// of B (its receiver names the type); calling a method or reading a field declared in B is a use
// of B, whichever file declared the type. Uses within one file, of other packages and of the
// universe (len, error) are not edges.
//
// Names are resolved with go/types, but the package is not type-checked as the compiler would:
// imports other than the standard library are not loaded (that would compile the module's
// dependencies), and type errors are ignored. A use that only the type of an expression from a
// non-standard package would resolve is therefore missed; such a type has no fields or methods
// declared in the package checked, so what can be missed is rare (a generic function of another
// module returning a type of this package).
package layers

// Package agtotel is placeholder.
package agtotel

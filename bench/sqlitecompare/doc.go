// Package sqlitecompare measures work queues on an SQLite file.
package sqlitecompare

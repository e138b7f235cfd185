package io.fastblock.storage.log;

/** A byte position in the log: segment number and offset within it. */
public record LogPosition(long segment, long position) {
}

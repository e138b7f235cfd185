package io.fastblock.protocol.meta;

/**
 * How far a joining node's catch-up is, written (optionally, and as often as it likes) by the
 * joining storage server at {@link ZkPaths#catchUpProgress(int, String)} for operators to see in
 * {@code fastblock status}. {@code totalBytes} is its estimate of what there is to copy (0 when
 * unknown); a delta catch-up reports only the delta.
 */
public record CatchUpProgress(long copiedBytes, long totalBytes) {
}

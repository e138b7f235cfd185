package io.fastblock.protocol.client;

import io.fastblock.protocol.Extents;

/** The answer of a READ with extents: the range's allocated extents and its bytes (zeros where unallocated). */
public record ExtentsAndData(Extents extents, byte[] data) {
}

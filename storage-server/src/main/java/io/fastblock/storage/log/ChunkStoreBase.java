package io.fastblock.storage.log;

import io.fastblock.protocol.ChunkId;
import io.fastblock.storage.chunk.ChunkStore;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.util.concurrent.ExecutionException;

/** {@link BaseFiles} over the node's {@link ChunkStore}: the tail's base files are the head/middle layout's chunk files. */
public final class ChunkStoreBase implements BaseFiles {
    private final ChunkStore chunks;

    public ChunkStoreBase(ChunkStore chunks) {
        this.chunks = chunks;
    }

    @Override
    public void read(ChunkId chunk, long offset, ByteBuf dst, int index, int length) throws IOException {
        ByteBuf got = chunks.read(chunk, offset, length, UnpooledByteBufAllocator.DEFAULT);
        try {
            dst.setBytes(index, got, 0, length);
        } finally {
            got.release();
        }
    }

    @Override
    public void write(ChunkId chunk, long offset, ByteBuf data) throws IOException {
        // Through the chunk's stripe, so the fold is ordered with in-place writes submitted after it.
        try {
            chunks.writeAsync(chunk, offset, data.retainedDuplicate()).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while folding into " + chunk, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() != null && e.getCause().getCause() instanceof IOException io ? io : e.getCause();
            throw c instanceof IOException io ? io : new IOException("fold write to " + chunk + " failed: " + c, c);
        }
    }

    @Override
    public void force(ChunkId chunk) throws IOException {
        chunks.force(chunk);
    }

    @Override
    public void trim(ChunkId chunk, long offset, long length) throws IOException {
        try {
            chunks.trimAsync(ChunkStore.UNKNOWN_GROUP, 0, chunk, offset, length, false).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while folding a trim into " + chunk, e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() != null && e.getCause().getCause() instanceof IOException io ? io : e.getCause();
            throw c instanceof IOException io ? io : new IOException("fold trim of " + chunk + " failed: " + c, c);
        }
    }

    @Override
    public io.fastblock.protocol.Extents extents(ChunkId chunk, long offset, long length) throws IOException {
        return chunks.extents(chunk, offset, length);
    }
}

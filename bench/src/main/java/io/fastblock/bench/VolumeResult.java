package io.fastblock.bench;

import java.util.List;

/**
 * What one URL's run measured.
 *
 * @param url            the LUN (without secret)
 * @param read           counted reads
 * @param write          counted writes
 * @param measuredNanos  from the end of the ramp to the last counted completion
 * @param errors         failed commands (all of them, ramp included)
 * @param errorSamples   the first few failure messages
 * @param verify         verification counts, null without --verify
 * @param windowStalls   commands that waited for the target's CmdSN window
 * @param r2ts           R2Ts answered
 */
public record VolumeResult(String url, DirectionStats read, DirectionStats write, long measuredNanos, long errors,
                           List<String> errorSamples, VerifyStats verify, long windowStalls, long r2ts) {

    /** Verification counts (in blocks of --bs). */
    public record VerifyStats(long exact, long otherGeneration, long zeros, long mismatches, long readBack,
                              List<String> mismatchSamples) {
    }
}

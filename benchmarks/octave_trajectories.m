% octave_trajectories(infile, outfile, k): the authors' PTA-AL and PTGP pipeline (their
% functions, on the path) on a 1-based label matrix in CSV; writes both labelings and the
% timers (PTS, PTA, PTGP wall times, number of microclusters, then the same three as CPU times).
% Called by modern_trajectories.py --bench.
function octave_trajectories(infile, outfile, k)
  baseCls = csvread(infile);
  t0 = tic; c0 = cputime;
  [mcBaseCls, mcLabels] = computeMicroclusters(baseCls);
  m = size(mcBaseCls, 1);
  MCA = computeMCA(mcBaseCls);
  para.K = min(20, floor(sqrt(m) / 2));
  para.T = para.K;
  PTS = computePTS_fast_v3(MCA, mcLabels, para);
  t_pts = toc(t0); c_pts = cputime - c0;
  t1 = tic; c1 = cputime;
  [al, cl, sl] = runPTA_v2(PTS, k);
  pta = mapMicroclustersBackToObjects(al, mcLabels);
  t_pta = toc(t1); c_pta = cputime - c1;
  t2 = tic; c2 = cputime;
  gp = runPTGP_v2(mcBaseCls, PTS, k);
  ptgp = mapMicroclustersBackToObjects(gp, mcLabels);
  t_ptgp = toc(t2); c_ptgp = cputime - c2;
  csvwrite(outfile, [pta, ptgp]);
  fid = fopen([outfile '.time'], 'w');
  fprintf(fid, '%f %f %f %d %f %f %f\n', t_pts, t_pta, t_ptgp, m, c_pts, c_pta, c_ptgp);
  fclose(fid);
end

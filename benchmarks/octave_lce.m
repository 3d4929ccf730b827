% octave_lce(infile, outfile, K, similarity, dc, R, linkages): the authors' LinkCluE pipeline
% (Iam-On & Garrett 2010; their pure-MATLAB cts / srs / asrs, stod, Octave's linkage and
% cluster, all on the path) on a 1-based label matrix in CSV. One similarity per call
% ('cts', 'srs' or 'asrs'); linkages is a cell array of 'single' / 'complete' / 'average'.
% Writes one column of labels per linkage to outfile, the merge heights of each dendrogram
% to outfile.Z<i>, and to outfile.time one line: the similarity's wall time (tic/toc) and CPU
% time (cputime), stod's, then wall and CPU of linkage + cluster for each linkage.
% outfile.progress holds the similarity's timers as soon as they are known. Called by modern_lce.py --bench; our own driver, their functions unchanged.
function octave_lce(infile, outfile, K, similarity, dc, R, linkages)
  max_recursion_depth(100000);   % cluster's 'maxclust' walks the dendrogram recursively
  E = csvread(infile);
  w0 = tic; c0 = cputime;
  switch similarity
    case 'cts'
      S = cts(E, dc);
    case 'srs'
      S = srs(E, dc, R);
    case 'asrs'
      S = asrs(E, dc);
  end
  times = [toc(w0), cputime - c0];
  dlmwrite([outfile '.progress'], times);   % read back if the run is stopped by the timeout
  w0 = tic; c0 = cputime;
  d = stod(S);
  clear S;
  times = [times, toc(w0), cputime - c0];
  labels = zeros(size(E, 1), numel(linkages));
  for i = 1:numel(linkages)
    w0 = tic; c0 = cputime;
    Z = linkage(d, linkages{i});
    labels(:, i) = cluster(Z, 'maxclust', K);
    times = [times, toc(w0), cputime - c0];
    dlmwrite(sprintf('%s.Z%d', outfile, i), Z(:, 3), 'precision', 17);
  end
  csvwrite(outfile, labels);
  fid = fopen([outfile '.time'], 'w');
  fprintf(fid, '%f ', times);
  fprintf(fid, '\n');
  fclose(fid);
end

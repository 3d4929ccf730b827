% octave_bce(infile, outfile, k, seed): the authors' BCE (their learnBCE, bceEstep and bceMstep
% on the path) started as their runBCE starts it (alpha = rand(k, 1), each beta row a normalised
% rand vector, Laplace smoothing 1e-6) on a 1-based label matrix in CSV; writes the labels
% (argmax of gamma, first on ties) and the wall time. Called by modern_bce.py.
function octave_bce(infile, outfile, k, seed)
  X = csvread(infile);
  rand('state', seed);
  r = size(X, 2);
  Q = max(X, [], 1);
  alpha0 = rand(k, 1);
  beta0 = cell(1, r);
  for j = 1:r
    b = rand(k, Q(j));
    beta0{j} = b ./ (sum(b, 2) * ones(1, Q(j)));
  end
  t0 = tic;
  [phiAll, gammaAll, alpha, beta] = learnBCE(X, alpha0, beta0, 1e-6, Q);
  elapsed = toc(t0);
  [~, labels] = max(gammaAll, [], 1);
  csvwrite(outfile, labels(:));
  fid = fopen([outfile '.time'], 'w');
  fprintf(fid, '%f\n', elapsed);
  fclose(fid);
end

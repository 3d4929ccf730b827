% Runs the authors' U-SENC generation step alone (huangdonghere/USPEC_USENC, checked out by
% benchmarks/bench_uspec.py): m = 20 calls of their USPEC.m with K_i uniform in [20, 60], p = 1000
% (their code lowers it to n), K = 5 and the generation's short discretisation (5 iterations, 1
% run), as their USENC.m generates its ensemble. The ensemble is saved so that cclust's transfer
% cut can fuse it (benchmarks/bench_uspec.py small: "their ensemble, cclust's consensus").
% Usage: octave-cli octave_usenc_ensemble.m <authors dir> <data.mat> <runs> <out.mat>
args = argv();
pkg load statistics
addpath(args{1});
load(args{2});  % fea, k
runs = str2double(args{3});
m = 20;
ensembles = zeros(size(fea, 1), m, runs);
done = 0;
warning('off', 'all');
for r = 1:runs
  rand('state', sum(100 * clock) * rand(1));
  Ks = randi([20, 60], m, 1);
  for i = 1:m
    ensembles(:, i, r) = USPEC(fea, Ks(i), 'euclidean', 1000, 5, 5, 1);
  end
  done = r;
  save('-mat7-binary', args{4}, 'ensembles', 'done');
end
